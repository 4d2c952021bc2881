// RUN: lstm-opt %s --convert-rnn-to-gpu="design=persistent max-blocks=1" -verify-diagnostics

// One block (max-blocks=1) for 512 units: its recurrent rows (512 of 512
// floats), the state and the sums, over 1 MiB, are more than 48 KiB of
// shared memory.
func.func @too_big(%x: tensor<2x1x3xf32>) -> tensor<2x1x1x512xf32> {
  %w = onnx.initializer "W" dense<0.5> : tensor<1x512x3xf32>
  %r = onnx.initializer "R" dense<0.25> : tensor<1x512x512xf32>
  %b = onnx.initializer "B" dense<0.125> : tensor<1x512xf32>
  // expected-error @below {{convert-rnn-to-gpu: the persistent kernel does not fit: 1 x 1 blocks of 512 units need 1054720 bytes of shared memory each (at most 49152), 512 epilogue threads (at most 1024) and 1 co-resident blocks (at most 1)}}
  %y, %hn = rnn.sequence rnn forward %x, %w, %r, %b, %b {hidden_size = 512 : i64} : (tensor<2x1x3xf32>, tensor<1x512x3xf32>, tensor<1x512x512xf32>, tensor<1x512xf32>, tensor<1x512xf32>) -> (tensor<2x1x1x512xf32>, tensor<1x1x512xf32>)
  return %y : tensor<2x1x1x512xf32>
}
