#!/usr/bin/env python3
"""silero-vad's own segmentation (silero_vad.utils_vad.get_speech_timestamps)
over 60 s of speech-like audio (test/RealModels/silero_vad.py's generator),
from ONNX Runtime's chunk loop on each stateful model the package ships and
from lstm-opt's batched stream (--target=cpu --stream-to-sequence=125
--state=auto, run_chunks over blocks of 125 chunks): the segments must be the
same list, and the probabilities within 1e-5.

Needs a Python with torch, the silero-vad package and onnxruntime (the
package's utils import torchaudio, which is stubbed: the segmentation does
not use it), e.g. python3 -m venv v && v/bin/pip install torch silero-vad
onnxruntime numpy; run from the repository root after scripts/build.sh.
"""
import importlib.util, os, subprocess, sys, tempfile, types
import numpy as np
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
WORK = tempfile.mkdtemp(prefix="silero-segments-")
sys.modules['torchaudio'] = types.ModuleType('torchaudio')
import torch
from silero_vad.utils_vad import get_speech_timestamps
sys.path.insert(0, os.path.join(ROOT, 'python'))
import onnxruntime as ort
from lstm_opt.runtime import Model
spec = importlib.util.spec_from_file_location('ours', os.path.join(ROOT, 'test', 'RealModels', 'silero_vad.py'))
ours = importlib.util.module_from_spec(spec); spec.loader.exec_module(ours)
M = os.path.expanduser('~/.cache/lstm-opt/models/silero-vad-6.2.3/')
sr, n, K = 16000, 512, 125
audio = ours.speech_like(60.0, sr).astype(np.float32)
N = (len(audio) // (n * K)) * K
audio = audio[:N * n]
chunks, ctx = [], np.zeros(64, np.float32)
for k in range(N):
    x = np.concatenate([ctx, audio[k * n:(k + 1) * n]])
    ctx = x[-64:]
    chunks.append(x[None, :])
chunks = np.stack(chunks)
class Fake:
    def __init__(self, probs): self.p = list(probs); self.i = 0
    def reset_states(self): self.i = 0
    def __call__(self, x, sr):
        v = self.p[self.i]; self.i += 1; return torch.tensor([[v]])
for name, binds in (("silero_vad.onnx", ["--bind=sr=16000"]), ("silero_vad_16k_op15.onnx", ["--bind=sr=16000"]),
                    ("silero_vad_op18_ifless.onnx", ["--bind=sr=16000"]), ("silero_vad_half.onnx", []),
                    ("silero_vad_openvino_16k.onnx", [])):
    so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.log_severity_level = 3
    s = ort.InferenceSession(M + name, so, providers=['CPUExecutionProvider'])
    names = {i.name for i in s.get_inputs()}
    st = np.zeros((2, 1, 128), np.float32); p_ort = []
    for k in range(N):
        f = {'input': chunks[k], 'state': st}
        if 'sr' in names: f['sr'] = np.array(sr, np.int64)
        p, st = s.run(None, f); p_ort.append(float(p.ravel()[0]))
    lib = os.path.join(WORK, name + '.so')
    subprocess.run([os.path.join(ROOT, 'build', 'bin', 'lstm-opt'), M + name, '--target=cpu', f'--stream-to-sequence={K}',
                    '--state=auto', '--threads=1', '--input-shape=input=1x576', '--input-shape=state=2x1x128',
                    '-o', lib] + binds, check=True, capture_output=True)
    stream = Model(lib).stream()
    p_ours = stream.run_chunks({'input': chunks.reshape(N // K, K, 1, 576)})['output'].ravel()
    t = torch.from_numpy(audio)
    a = get_speech_timestamps(t, Fake(p_ort), sampling_rate=sr)
    b = get_speech_timestamps(t, Fake(p_ours), sampling_rate=sr)
    print(f"{name}: {len(a)} segments from ONNX Runtime, {len(b)} from lstm-opt batched; identical: {a == b}; "
          f"max |p - p_ORT| {np.max(np.abs(np.array(p_ort) - p_ours)):.1e}")
