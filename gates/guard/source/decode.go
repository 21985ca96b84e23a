package source

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Text decoded at run time and fed to a shell (echo c2h1dGRvd24= | base64 -d | sh) is a
// script like any other: the guard decodes base64, base32 and hex literals and judges what
// they say. A blob it cannot decode (a variable, garbage) piped into a shell is a warning.

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, s)
}

// decodedText accepts a decoding that is text a shell could read.
func decodedText(b []byte, err error) (string, bool) {
	if err != nil || len(b) == 0 || !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
		return "", false
	}
	return string(b), true
}

func DecodeBase64(s string) (string, bool) {
	s = stripSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if t, ok := decodedText(enc.DecodeString(s)); ok {
			return t, true
		}
	}
	return "", false
}

func DecodeBase32(s string) (string, bool) {
	s = stripSpace(s)
	for _, enc := range []*base32.Encoding{base32.StdEncoding, base32.StdEncoding.WithPadding(base32.NoPadding)} {
		if t, ok := decodedText(enc.DecodeString(s)); ok {
			return t, true
		}
	}
	return "", false
}

func DecodeHex(s string) (string, bool) {
	s = strings.TrimPrefix(stripSpace(s), "0x")
	return decodedText(hex.DecodeString(s))
}
