// The Porter stemmer exactly as rouge_score calls it: nltk.stem.porter.PorterStemmer() in its
// default mode, NLTK_EXTENSIONS. That is M. F. Porter's 1980 algorithm ("An algorithm for suffix
// stripping", Program 14(3)) with NLTK's documented departures:
//   - a few irregular forms are looked up first (skies/sky -> sky, dying -> die, lying -> lie,
//     tying -> tie, news -> news, innings -> inning, outings -> outing, cannings -> canning,
//     howe, proceed, exceed, succeed stay as they are);
//   - words of one or two letters are returned unchanged;
//   - step 1a: a four-letter "-ies" word becomes "-ie" (ties -> tie); step 1b: "-ied" becomes
//     "-ie" in four-letter words, else "-i";
//   - step 1c: final y -> i only after a consonant that is not the first letter (cry -> cri,
//     but say, day, play keep their y: the original turns says into "sai");
//   - step 2: "-alli" -> "-al" is tried first and step 2 re-run on the result; "-bli" -> "-ble"
//     replaces the paper's "-abli" -> "-able"; "-fulli" -> "-ful"; "-logi" -> "-log" when the stem
//     with its "l" has a positive measure;
//   - *o (the cvc test) also holds for a two-letter vowel-consonant stem.
// Snowball's "porter" (libstemmer) is the original algorithm and differs on every one of these
// (says -> sai, skies -> ski, dying -> dy), which changes ROUGE with the stemmer on; hence this file.
// Input: a lowercase ASCII word; any character other than a, e, i, o, u (and y after a vowel)
// counts as a consonant, as in NLTK.
#pragma once

#include <string>
#include <string_view>

namespace engram::eval {

std::string porter_stem(std::string_view word);

}  // namespace engram::eval
