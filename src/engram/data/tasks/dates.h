// Date normalisation task for the seq2seq demo: a random date written in one of many human forms
// ("29 November 2026", "Nov 29, 2026", "29/11/2026", "2026年11月29日", "Sunday, November 29,
// 2026", "11.29.26", ...) -> ISO 8601 "YYYY-MM-DD". Split the strings with utf8_chars() (text.h) for a
// character model or split_whitespace() for a word model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/core/rng.h"

namespace engram::data::tasks {

struct Date {
  int year = 2000;
  int month = 1;  // 1..12
  int day = 1;    // 1..days_in_month
};

struct DatesOptions {
  // Two-digit years ("11.29.26") are read in this range, so keep it within 100 years; the default
  // maps 70..99 -> 1970..1999 and 00..69 -> 2000..2069.
  int min_year = 1970;
  int max_year = 2069;
  std::vector<int> formats;  // subset of 0..num_date_formats()-1; empty = all
};

struct DatePair {
  std::string source;  // e.g. "Sunday, November 29, 2026"
  std::string target;  // ISO 8601 "YYYY-MM-DD"
  int format = 0;
};

int num_date_formats();
int days_in_month(int year, int month);
int day_of_week(const Date& d);  // 0 = Monday ... 6 = Sunday (proleptic Gregorian)
// Formats 0..num_date_formats()-1; format_date(d, 0) == "29 November 2026".
std::string format_date(const Date& d, int format);
std::string iso_date(const Date& d);  // ISO 8601 "YYYY-MM-DD"

// A uniformly random day in [min_year-01-01, max_year-12-31].
Date random_date(const DatesOptions& options, core::Rng& rng);
DatePair make_date_pair(const DatesOptions& options, core::Rng& rng);
std::vector<DatePair> make_date_pairs(int64_t n, const DatesOptions& options, core::Rng& rng);

}  // namespace engram::data::tasks
