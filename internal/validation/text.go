package validation

import "unicode"

// CodeInvalidCharacters is the 422 code of text holding characters no field
// may store: control characters, bidirectional overrides, or only invisible ones.
const CodeInvalidCharacters = "invalid_characters"

// MultilineAbove is the length limit above which a text field is free text
// (a description, a reason) and may hold tabs and line breaks. Shorter fields
// (names, codes, ids, e-mail addresses) are single-line.
const MultilineAbove = 255

// Text checks the characters of a text field value: it reports an Error with
// CodeInvalidCharacters, or nil.
//
//   - C0 and C1 control characters (and DEL) are refused; free text
//     (multiline) may hold tab, line feed and carriage return. Single-line
//     fields also refuse the Unicode line and paragraph separators.
//   - Bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069) are refused everywhere: they make text display in an
//     order other than the one stored (Trojan Source). The marks U+200E,
//     U+200F and U+061C stay allowed.
//   - A value that is not empty but blank once white space and invisible
//     characters (zero-width spaces and joiners, word joiner, BOM, fillers,
//     variation selectors, ...) are removed is refused: it would look empty.
//     A value of white space alone is left to the caller's "required" rule.
//   - NUL is refused with CodeInvalidValue: PostgreSQL text cannot hold it,
//     so every text of a request, an import row or a sync record passes here.
func Text(field, s string, multiline bool) error {
	blank, invisible := true, false
	for _, r := range s {
		switch {
		case r == 0:
			return New(field, CodeInvalidValue, "must not contain NUL characters")
		case unicode.IsControl(r) && !(multiline && (r == '\t' || r == '\n' || r == '\r')):
			return New(field, CodeInvalidCharacters, "must not contain control characters (U+%04X)", r)
		case !multiline && (r == '\u2028' || r == '\u2029'):
			return New(field, CodeInvalidCharacters, "must not contain line or paragraph separators (U+%04X)", r)
		case IsBidiControl(r):
			return New(field, CodeInvalidCharacters, "must not contain bidirectional override, embedding or isolate characters (U+%04X)", r)
		case IsInvisible(r):
			invisible = true
		case unicode.IsSpace(r):
		default:
			blank = false
		}
	}
	if blank && invisible {
		return New(field, CodeInvalidCharacters, "must not be blank (it holds only invisible characters)")
	}
	return nil
}

// IsBidiControl reports the bidirectional embeddings, overrides and isolates.
func IsBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// IsInvisible reports characters that render as nothing (or as blank space
// that is not white space): format characters such as zero-width spaces and
// joiners, the word joiner and the BOM, plus fillers and variation selectors.
func IsInvisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r) && !IsBidiControl(r):
		return true
	case r == '\u034F', // combining grapheme joiner
		r == '\u115F', r == '\u1160', r == '\u3164', r == '\uFFA0', // Hangul fillers
		r == '\u2800',                // Braille pattern blank
		r == '\u17B4', r == '\u17B5', // Khmer inherent vowels
		r >= '\uFE00' && r <= '\uFE0F', // variation selectors
		r >= 0xE0100 && r <= 0xE01EF:   // variation selectors supplement
		return true
	}
	return false
}
