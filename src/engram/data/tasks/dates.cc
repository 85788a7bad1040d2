// Date formats and random dates (see dates.h).
#include "engram/data/tasks/dates.h"

#include <fmt/format.h>

#include "engram/core/error.h"

namespace engram::data::tasks {
namespace {

constexpr const char* kMonths[] = {"January",   "February", "March",    "April",
                                   "May",       "June",     "July",     "August",
                                   "September", "October",  "November", "December"};
constexpr const char* kMonthsShort[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr const char* kDays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                 "Friday", "Saturday", "Sunday"};
constexpr int kNumFormats = 15;

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

std::string ordinal(int day) {
  const char* suffix = "th";
  if (day % 100 < 11 || day % 100 > 13) {
    if (day % 10 == 1) suffix = "st";
    if (day % 10 == 2) suffix = "nd";
    if (day % 10 == 3) suffix = "rd";
  }
  return fmt::format("{}{}", day, suffix);
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Date civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  Date d;
  d.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  d.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  d.year = static_cast<int>(yoe + era * 400 + (d.month <= 2));
  return d;
}

}  // namespace

int num_date_formats() { return kNumFormats; }

int days_in_month(int year, int month) {
  ENGRAM_CHECK(month >= 1 && month <= 12, "dates: month {} out of range", month);
  constexpr int kDaysIn[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDaysIn[month - 1];
}

int day_of_week(const Date& d) {
  const int64_t days = days_from_civil(d.year, d.month, d.day);  // 1970-01-01 was a Thursday (3)
  return static_cast<int>(((days % 7) + 7 + 3) % 7);
}

std::string format_date(const Date& d, int format) {
  ENGRAM_CHECK(
      d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= days_in_month(d.year, d.month),
      "dates: invalid date {}-{}-{}", d.year, d.month, d.day);
  const char* month = kMonths[d.month - 1];
  const char* mon = kMonthsShort[d.month - 1];
  const char* weekday = kDays[day_of_week(d)];
  const int yy = ((d.year % 100) + 100) % 100;
  // clang-format off
  switch (format) {
    case 0: return fmt::format("{} {} {}", d.day, month, d.year);               // 29 November 2026
    case 1: return fmt::format("{} {}, {}", mon, d.day, d.year);                // Nov 29, 2026
    case 2: return fmt::format("{:02}/{:02}/{}", d.day, d.month, d.year);       // 29/11/2026
    case 3: return fmt::format("{}年{}月{}日", d.year, d.month, d.day);          // 2026年11月29日
    case 4: return fmt::format("{}, {} {}, {}", weekday, month, d.day, d.year); // Sunday, November 29, 2026
    case 5: return fmt::format("{:02}.{:02}.{:02}", d.month, d.day, yy);        // 11.29.26
    case 6: return fmt::format("{} {}, {}", month, d.day, d.year);              // November 29, 2026
    case 7: return fmt::format("{} {} {}", d.day, mon, d.year);                 // 29 Nov 2026
    case 8: return fmt::format("{}/{:02}/{:02}", d.year, d.month, d.day);       // 2026/11/29
    case 9: return fmt::format("{:.3} {} {} {}", weekday, d.day, mon, d.year);  // Sun 29 Nov 2026
    case 10: return fmt::format("{:02}.{:02}.{}", d.day, d.month, d.year);      // 29.11.2026
    case 11: return fmt::format("{} {} {}", lower(mon), d.day, d.year);         // nov 29 2026
    case 12: return fmt::format("the {} of {}, {}", ordinal(d.day), month, d.year);  // the 29th of November, 2026
    case 13: return fmt::format("{:02}-{}-{:02}", d.day, mon, yy);              // 29-Nov-26
    case 14: return fmt::format("{}{:02}{:02}", d.year, d.month, d.day);        // 20261129
    default: break;
  }
  // clang-format on
  ENGRAM_CHECK(false, "dates: format {} out of range [0, {})", format, kNumFormats);
  return {};
}

std::string iso_date(const Date& d) {
  return fmt::format("{:04}-{:02}-{:02}", d.year, d.month, d.day);
}

Date random_date(const DatesOptions& o, core::Rng& rng) {
  ENGRAM_CHECK(o.min_year <= o.max_year && o.max_year - o.min_year < 100 && o.min_year >= 1,
               "dates: need 1 <= min_year <= max_year < min_year + 100 (two-digit years must be "
               "unambiguous), got {}..{}",
               o.min_year, o.max_year);
  const int64_t first = days_from_civil(o.min_year, 1, 1);
  const int64_t last = days_from_civil(o.max_year, 12, 31);
  return civil_from_days(first +
                         static_cast<int64_t>(rng.below(static_cast<uint64_t>(last - first + 1))));
}

DatePair make_date_pair(const DatesOptions& o, core::Rng& rng) {
  const Date d = random_date(o, rng);
  int format;
  if (o.formats.empty()) {
    format = static_cast<int>(rng.below(kNumFormats));
  } else {
    format = o.formats[rng.below(o.formats.size())];
  }
  return {format_date(d, format), iso_date(d), format};
}

std::vector<DatePair> make_date_pairs(int64_t n, const DatesOptions& o, core::Rng& rng) {
  ENGRAM_CHECK(n >= 0, "dates: n must be >= 0, got {}", n);
  std::vector<DatePair> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(make_date_pair(o, rng));
  return out;
}

}  // namespace engram::data::tasks
