// Package source holds the text the guard's front ends read and where each of its bytes
// came from.
//
// A script the guard judges is rarely a file as it is: a workflow's `run:` is a YAML
// scalar with its indentation and escapes, a Makefile recipe has make's `$$`, a script may
// be a string in a Python call or a base64 blob. A front end builds the script as a Text
// with a Builder, piece by piece, each piece mapped to its offsets in the file (FileOff,
// FileEnd), so that every finding names the file's own line and column. A byte whose
// value cannot be known (a `${{ }}` expression, a make variable) is UnknownByte: it
// keeps positions right and never matches a rule word.
//
// Kind says how a file is read (a shebang decides it for a file without a telling name:
// ShebangKind); the decoders read base64, base32 and hex literals.
package source
