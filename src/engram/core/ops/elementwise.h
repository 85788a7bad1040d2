// Element-wise ops: binary arithmetic with numpy broadcasting, and unary maths.
// All differentiable. Shapes: out = broadcast(a, b) for binary ops, same as x for unary ops.
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

Var add(Var a, Var b);  // a + b
Var sub(Var a, Var b);  // a - b
Var mul(Var a, Var b);  // a * b
Var div(Var a, Var b);  // a / b
Var neg(Var x);         // -x
Var scale(Var x, float s);       // s * x
Var add_scalar(Var x, float s);  // x + s
Var exp(Var x);
Var log(Var x);       // natural log; x > 0
Var tanh(Var x);
Var sigmoid(Var x);
Var relu(Var x);
Var softplus(Var x);  // log(1 + e^x), stable for large |x|
Var pow(Var x, float p);  // x^p; x > 0 unless p is a whole number
Var sqrt(Var x);
Var square(Var x);    // x^2
Var one_minus(Var x); // 1 - x

inline Var operator+(Var a, Var b) { return add(a, b); }
inline Var operator-(Var a, Var b) { return sub(a, b); }
inline Var operator*(Var a, Var b) { return mul(a, b); }
inline Var operator/(Var a, Var b) { return div(a, b); }
inline Var operator-(Var x) { return neg(x); }
inline Var operator*(float s, Var x) { return scale(x, s); }
inline Var operator*(Var x, float s) { return scale(x, s); }

}  // namespace engram::core
