# -*- Python -*-
# The gtest units: each test case of the binaries built into this folder's
# build directory is one lit test.
import os

import lit.formats

config.name = "LSTM_OPT_UNIT"
config.suffixes = []
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.lstm_opt_obj_root, "test", "unittests")
config.test_exec_root = config.test_source_root
