package linescan

// StripANSI appends line to dst without its ANSI escape sequences: CSI ("ESC [ 1;31 m"),
// OSC ("ESC ] 8;;url BEL" or "... ESC \", the hyperlinks gcc and clang print) and the
// short forms ("ESC ( B", which tput sgr0 ends with). Tools colour their output when CI
// fakes a terminal, and a parser must read the same words either way; stripping only
// "ESC [" would leave an OSC's URL or the "B" of "ESC ( B" in the text.
//
// A sequence cut short by the end of line is dropped; the byte that breaks off a CSI's
// parameters is kept, since it is text.
func StripANSI(dst, line []byte) []byte {
	b := line
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != 0x1b {
			dst = append(dst, c)
			continue
		}
		j := i + 1
		switch {
		case j < len(b) && b[j] == '[':
			j++
			for j < len(b) && b[j] >= 0x20 && b[j] <= 0x3f {
				j++
			}
			if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
				j++
			}
		case j < len(b) && b[j] == ']':
			for j < len(b) && b[j] != 0x07 && !(b[j] == '\\' && b[j-1] == 0x1b) {
				j++
			}
			if j < len(b) {
				j++
			}
		default:
			for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
				j++
			}
			if j < len(b) {
				j++
			}
		}
		i = j - 1
	}
	return dst
}
