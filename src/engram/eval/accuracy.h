// Accuracy and exact match over parallel lists of strings (answers, labels, whole outputs).
#pragma once

#include <string>
#include <vector>

namespace engram::eval {

// Fraction of positions where hyp == ref exactly (byte equality); 0 for empty input.
double accuracy(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

// Like accuracy, after normalising both sides: Python-whitespace runs collapse to one space,
// leading/trailing whitespace is removed, and with lowercase=true simple_lower() is applied.
double exact_match(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                   bool lowercase = true);

}  // namespace engram::eval
