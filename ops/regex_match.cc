// RegexFullMatch's matcher (see regex_match.h): UTF-8 decoding, the RE2 pattern scan that checks
// bounds and refused constructs while writing the ECMAScript form, and the std::wregex calls (the
// only place in the project that catches exceptions: std::regex reports errors by throwing).
#include "ops/regex_match.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ops {
namespace {

constexpr char32_t kReplacement = 0xFFFD;
constexpr int64_t kMaxRepeat = 1000;

// Decodes one UTF-8 sequence at s[*i] (advancing *i); -1 for an invalid, overlong, surrogate or
// truncated sequence (then *i advances by one byte).
int32_t DecodeUtf8(std::string_view s, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t lead = byte(*i);
  int length = 0;
  int32_t cp = 0;
  if (lead < 0x80) {
    ++*i;
    return lead;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, cp = lead & 0x07;
  } else {
    ++*i;
    return -1;
  }
  if (*i + length > s.size()) {
    ++*i;
    return -1;
  }
  for (int k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) {
      ++*i;
      return -1;
    }
    cp = (cp << 6) | (byte(*i + k) & 0x3F);
  }
  const int32_t min_cp = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return -1;
  }
  *i += length;
  return cp;
}

bool IsDigit(wchar_t c) { return c >= L'0' && c <= L'9'; }
bool IsAsciiLetter(wchar_t c) { return (c >= L'a' && c <= L'z') || (c >= L'A' && c <= L'Z'); }
bool IsHexDigit(wchar_t c) { return IsDigit(c) || (c >= L'a' && c <= L'f') || (c >= L'A' && c <= L'F'); }

// The size estimate of one nesting level: all of it, and its last atom (what a quantifier repeats).
struct Frame {
  int64_t total = 0;
  int64_t last = 0;
};

// Scans an RE2 pattern (as code points) and writes its ECMAScript form.
class Translator {
 public:
  explicit Translator(std::wstring pattern) : p_(std::move(pattern)) {}

  absl::Status Run() {
    if (p_.compare(0, 4, L"(?i)") == 0) icase_ = true, pos_ = 4;
    frames_.emplace_back();
    while (pos_ < p_.size()) {
      absl::Status s = Step();
      if (!s.ok()) return s;
      int64_t units = 0;
      for (const Frame& f : frames_) units += f.total;
      if (units > kMaxRegexUnits) return Error("the pattern is too large once repetitions expand");
    }
    return absl::OkStatus();
  }
  const std::wstring& out() const { return out_; }
  int64_t units() const { return frames_.front().total; }
  bool icase() const { return icase_; }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, " at character ", pos_));
  }

  void Atom(int64_t units) {
    frames_.back().last = units;
    frames_.back().total += units;
    prev_ = Prev::kAtom;
  }

  // RE2's rule for a repetition operator: it follows an atom, never another operator (`a**`,
  // `a*+`, `a{2}{3}` are errors), except `?` after one, which makes it lazy.
  absl::Status Repeat(bool may_be_lazy_mark) {
    if (may_be_lazy_mark && prev_ == Prev::kRepeat) {
      prev_ = Prev::kLazyRepeat;
      return absl::OkStatus();
    }
    if (prev_ == Prev::kNothing) return Error("missing argument to repetition operator");
    if (prev_ != Prev::kAtom) return Error("bad repetition operator (a repetition of a repetition)");
    prev_ = Prev::kRepeat;
    return absl::OkStatus();
  }

  absl::Status Step() {
    const wchar_t c = p_[pos_];
    switch (c) {
      case L'\\': return Escape(/*in_class=*/false);
      case L'[': return Class();
      case L'(': return Open();
      case L')': return Close();
      case L'{': return Brace();
      case L'*':
      case L'+':
      case L'?':
        if (absl::Status s = Repeat(/*may_be_lazy_mark=*/c == L'?'); !s.ok()) return s;
        out_ += p_[pos_++];
        frames_.back().total += 1;
        return absl::OkStatus();
      case L'|':
        out_ += p_[pos_++];
        frames_.back().total += 1;
        frames_.back().last = 0;
        prev_ = Prev::kNothing;
        return absl::OkStatus();
      case L'.':  // RE2's `.` takes \r, U+2028 and U+2029 too; ECMAScript's does not
        out_ += L"(?:.|\\r)";
        ++pos_;
        Atom(3);
        return absl::OkStatus();
      case L'}':
        out_ += L"\\}";
        ++pos_;
        Atom(1);
        return absl::OkStatus();
      default:
        out_ += p_[pos_++];
        Atom(1);
        return absl::OkStatus();
    }
  }

  // An escape at p_[pos_] == '\\'.
  absl::Status Escape(bool in_class) {
    if (pos_ + 1 >= p_.size()) return Error("the pattern ends in a lone backslash");
    const wchar_t e = p_[pos_ + 1];
    if (IsDigit(e)) return Error("backreferences (not RE2 syntax) and octal escapes are not supported");
    if (e == L'x') {
      if (pos_ + 2 < p_.size() && p_[pos_ + 2] == L'{') return Error("\\x{...} escapes are not supported; use \\xHH");
      if (pos_ + 3 >= p_.size() || !IsHexDigit(p_[pos_ + 2]) || !IsHexDigit(p_[pos_ + 3])) {
        return Error("\\x needs two hex digits");
      }
      out_.append(p_, pos_, 4);
      pos_ += 4;
      if (!in_class) Atom(1);
      return absl::OkStatus();
    }
    std::wstring text;
    if (!IsAsciiLetter(e)) {
      text = {L'\\', e};  // escaped punctuation or any other character: itself
    } else if (std::wstring_view(L"dDwWsSfnrtv").find(e) != std::wstring_view::npos) {
      text = {L'\\', e};
    } else if (e == L'a') {
      text = L"\\x07";
    } else if (!in_class && (e == L'b' || e == L'B')) {
      text = {L'\\', e};
    } else if (!in_class && (e == L'A' || e == L'z')) {
      text = e == L'A' ? L"^" : L"$";
    } else if (e == L'p' || e == L'P' || e == L'Q' || e == L'E' || e == L'C') {
      return Error(absl::StrCat("\\", std::string(1, static_cast<char>(e)), " is not supported"));
    } else {
      return Error(absl::StrCat("\\", std::string(1, static_cast<char>(e)), " is not an RE2 escape here"));
    }
    out_ += text;
    pos_ += 2;
    // Class escapes and word boundaries cost a few steps per character (locale class tests).
    const bool class_escape = std::wstring_view(L"dDwWsS").find(e) != std::wstring_view::npos;
    if (!in_class) Atom(class_escape ? 3 : e == L'b' || e == L'B' ? 2 : 1);
    return absl::OkStatus();
  }

  // A class at p_[pos_] == '['.
  // Its size estimate counts every character written inside, as matching scans the members.
  absl::Status Class() {
    const size_t start = pos_;
    const size_t out_start = out_.size();
    out_ += L'[';
    ++pos_;
    if (pos_ < p_.size() && p_[pos_] == L'^') out_ += p_[pos_++];
    if (pos_ < p_.size() && p_[pos_] == L']') out_ += L"\\]", ++pos_;
    while (pos_ < p_.size() && p_[pos_] != L']') {
      if (p_[pos_] == L'\\') {
        absl::Status s = Escape(/*in_class=*/true);
        if (!s.ok()) return s;
      } else if (p_.compare(pos_, 2, L"[:") == 0) {
        const size_t end = p_.find(L":]", pos_ + 2);
        if (end == std::wstring::npos) return Error("unterminated [: in a class");
        const std::wstring name = p_.substr(pos_ + 2, end - pos_ - 2);
        out_ += name == L"word" ? L"\\w" : p_.substr(pos_, end + 2 - pos_);
        pos_ = end + 2;
      } else if (p_[pos_] == L'[') {
        out_ += L"\\[";
        ++pos_;
      } else {
        out_ += p_[pos_++];
      }
    }
    if (pos_ >= p_.size()) {
      pos_ = start;
      return Error("missing ] of the class");
    }
    out_ += p_[pos_++];
    Atom(static_cast<int64_t>(out_.size() - out_start));
    return absl::OkStatus();
  }

  absl::Status Open() {
    if (static_cast<int>(frames_.size()) > kMaxRegexDepth) return Error("groups are nested too deeply");
    std::wstring_view rest = std::wstring_view(p_).substr(pos_);
    size_t skip = 1;
    if (rest.substr(0, 2) == L"(?") {
      if (rest.substr(0, 3) == L"(?:") {
        out_ += L"(?:";
        skip = 3;
      } else if (rest.substr(0, 3) == L"(?=" || rest.substr(0, 3) == L"(?!" || rest.substr(0, 4) == L"(?<=" ||
                 rest.substr(0, 4) == L"(?<!") {
        return Error("lookaround is not RE2 syntax");
      } else if (rest.substr(0, 4) == L"(?P<" || rest.substr(0, 3) == L"(?<") {
        const size_t close = rest.find(L'>');
        if (close == std::wstring_view::npos) return Error("unterminated group name");
        out_ += L'(';
        skip = close + 1;
      } else {
        return Error("flags other than a leading (?i) are not supported");
      }
    } else {
      out_ += L'(';
    }
    pos_ += skip;
    frames_.emplace_back();
    prev_ = Prev::kNothing;
    return absl::OkStatus();
  }

  absl::Status Close() {
    if (frames_.size() < 2) return Error("unexpected )");
    const int64_t units = frames_.back().total + 2;
    frames_.pop_back();
    out_ += p_[pos_++];
    Atom(units);
    return absl::OkStatus();
  }

  // `{n}`, `{n,}` or `{n,m}` repeats the last atom; any other `{` is a literal.
  absl::Status Brace() {
    size_t i = pos_ + 1;
    const auto number = [&](int64_t* value) {
      const size_t first = i;
      *value = 0;
      while (i < p_.size() && IsDigit(p_[i]))
        *value = std::min<int64_t>(*value * 10 + (p_[i++] - L'0'), kMaxRepeat + 1);
      return i > first;
    };
    int64_t lo = 0, hi = 0;
    bool valid = number(&lo);
    bool open_ended = false;
    if (valid && i < p_.size() && p_[i] == L',') {
      ++i;
      open_ended = !number(&hi);
    } else {
      hi = lo;
    }
    valid = valid && i < p_.size() && p_[i] == L'}';
    if (!valid) {
      out_ += L"\\{";
      ++pos_;
      Atom(1);
      return absl::OkStatus();
    }
    if (lo > kMaxRepeat || hi > kMaxRepeat) return Error("a repetition count is over 1000");
    if (!open_ended && hi < lo) return Error("a repetition {n,m} has m < n");
    if (absl::Status s = Repeat(/*may_be_lazy_mark=*/false); !s.ok()) return s;
    out_.append(p_, pos_, i + 1 - pos_);
    pos_ = i + 1;
    Frame& f = frames_.back();
    const int64_t copies = open_ended ? lo + 1 : std::max<int64_t>(hi, 1);
    f.total += f.last * (copies - 1) + 1;
    f.last = f.last * copies;
    return absl::OkStatus();
  }

  std::wstring p_;
  size_t pos_ = 0;
  std::wstring out_;
  bool icase_ = false;
  std::vector<Frame> frames_;
  enum class Prev { kNothing, kAtom, kRepeat, kLazyRepeat };
  Prev prev_ = Prev::kNothing;  // what the last token was, for Repeat's rule
};

std::string Quoted(std::string_view pattern) {
  const std::string_view shown = pattern.substr(0, 200);
  return absl::StrCat("\"", absl::CHexEscape(absl::string_view(shown.data(), shown.size())),
                      pattern.size() > shown.size() ? "...\"" : "\"");
}

}  // namespace

absl::StatusOr<FullMatchRegex> FullMatchRegex::Create(std::string_view pattern) {
  std::wstring wide;
  for (size_t i = 0; i < pattern.size();) {
    const int32_t cp = DecodeUtf8(pattern, &i);
    if (cp < 0) return absl::InvalidArgumentError(absl::StrCat("pattern ", Quoted(pattern), " is not valid UTF-8"));
    wide += static_cast<wchar_t>(cp);
  }
  Translator translator(std::move(wide));
  if (absl::Status s = translator.Run(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("pattern ", Quoted(pattern), ": ", s.message()));
  }
  auto flags = std::regex::ECMAScript | std::regex::nosubs | std::regex_constants::__polynomial;
  if (translator.icase()) flags |= std::regex::icase;
  auto regex = std::make_shared<std::wregex>();
  try {
    regex->imbue(std::locale::classic());
    regex->assign(translator.out(), flags);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("pattern ", Quoted(pattern), " does not compile: ", e.what()));
  }
  // Case-insensitive matching translates every character compared: about twice the work.
  const int64_t units = std::max<int64_t>(translator.units(), 1) * (translator.icase() ? 2 : 1);
  return FullMatchRegex(std::move(regex), units);
}

absl::StatusOr<bool> FullMatchRegex::Matches(std::string_view text) const {
  const int64_t limit = std::min(kMaxRegexTextBytes, kMaxRegexWork / units_);
  if (static_cast<int64_t>(text.size()) > limit) {
    return absl::ResourceExhaustedError(absl::StrCat("a string of ", text.size(), " bytes is longer than the limit of ",
                                                     limit, " bytes for RegexFullMatch with this pattern (size ",
                                                     units_, ")"));
  }
  std::wstring wide;
  wide.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const int32_t cp = DecodeUtf8(text, &i);
    wide += static_cast<wchar_t>(cp < 0 ? kReplacement : cp);
  }
  try {
    return std::regex_match(wide, *regex_);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("regex match failed: ", e.what()));
  }
}

absl::StatusOr<std::optional<std::pair<size_t, size_t>>> FullMatchRegex::Search(const std::wstring& text,
                                                                                size_t from) const {
  if (from > text.size()) return std::nullopt;
  std::match_results<std::wstring::const_iterator> m;
  auto flags = std::regex_constants::match_default;
  if (from > 0) flags |= std::regex_constants::match_prev_avail;  // ^ and \b see the character before
  try {
    if (!std::regex_search(text.cbegin() + static_cast<std::ptrdiff_t>(from), text.cend(), m, *regex_, flags)) {
      return std::nullopt;
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("regex search failed: ", e.what()));
  }
  const size_t begin = from + static_cast<size_t>(m.position(0));
  return std::make_pair(begin, begin + static_cast<size_t>(m.length(0)));
}

absl::Status DecodeUtf8Text(std::string_view text, std::wstring& code_points, std::vector<size_t>& offsets) {
  code_points.clear();
  offsets.clear();
  for (size_t i = 0; i < text.size();) {
    offsets.push_back(i);
    const int32_t cp = DecodeUtf8(text, &i);
    if (cp < 0) return absl::InvalidArgumentError(absl::StrCat("the string ", Quoted(text), " is not valid UTF-8"));
    code_points += static_cast<wchar_t>(cp);
  }
  offsets.push_back(text.size());
  return absl::OkStatus();
}

}  // namespace ops
