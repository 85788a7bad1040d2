// All ops of the engine, by family. Include this from nn/ and models/.
#pragma once

#include "engram/core/graph.h"
#include "engram/core/ops/attention_score.h"
#include "engram/core/ops/elementwise.h"
#include "engram/core/ops/index.h"
#include "engram/core/ops/loss.h"
#include "engram/core/ops/matmul.h"
#include "engram/core/ops/memory_ops.h"
#include "engram/core/ops/norm.h"
#include "engram/core/ops/reduce.h"
#include "engram/core/ops/rnn_cell.h"
#include "engram/core/ops/rnn_sequence.h"
#include "engram/core/ops/shape_ops.h"
#include "engram/core/ops/softmax.h"
