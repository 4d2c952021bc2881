//===- lstm-opt.cpp - the lstm-opt tool -----------------------------------===//

#include "lstm-opt/Tools/LstmOptMain.h"

int main(int argc, char **argv) { return lstm_opt::lstmOptMain(argc, argv); }
