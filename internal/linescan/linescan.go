// Package linescan hands a tool log's parser one line at a time, as the tool meant it:
// without holding more than one line, with a line's length bounded, and (StripANSI)
// without the colour a faked terminal adds. Tool logs can be gigabytes long and a single
// line can be megabytes (a dump of a huge operand, a binary mistaken for text), so a
// parser must neither hold the input nor trust its line lengths.
package linescan

import (
	"bufio"
	"io"
)

// bufSize is the read buffer; lines up to this long are passed without copying.
const bufSize = 64 << 10

// Each calls fn for every line of r, with its line ending ("\n", or "\r\n") still attached
// except on a last line without one. A line longer than maxLine is cut to its first maxLine
// bytes; the rest is skipped. fn must not keep the slice: it is reused.
func Each(r io.Reader, maxLine int, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, bufSize)
	var long []byte
	keep := func(chunk []byte) {
		if len(long) < maxLine {
			long = append(long, chunk[:min(len(chunk), maxLine-len(long))]...)
		}
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if long == nil {
				long = make([]byte, 0, min(maxLine, 2*bufSize))
			}
			keep(chunk)
			continue
		}
		line := chunk
		if long != nil {
			keep(chunk)
			line, long = long, nil
		}
		if len(line) > maxLine {
			line = line[:maxLine]
		}
		if len(line) > 0 {
			fn(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// EachTail is Each for a parser that must also see how a long line ends (a crash printed
// at the end of a megabyte of output without a line end): fn gets a line cut to its first
// maxLine bytes with, in tail, its last tailBytes (line ending included); tail is nil for a
// line that was not cut. What lies between is skipped. fn must keep neither slice.
func EachTail(r io.Reader, maxLine, tailBytes int, fn func(line, tail []byte)) error {
	br := bufio.NewReaderSize(r, bufSize)
	var head, tail []byte
	n := 0 // the current line's length so far
	keep := func(chunk []byte) {
		n += len(chunk)
		if room := maxLine - len(head); room > 0 {
			head = append(head, chunk[:min(len(chunk), room)]...)
		}
		tail = append(tail, chunk...)
		if over := len(tail) - tailBytes; over > 0 {
			tail = append(tail[:0], tail[over:]...)
		}
	}
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			keep(chunk)
			continue
		case n == 0 && len(chunk) <= maxLine:
			// The whole line in the buffer: no copy.
			if len(chunk) > 0 {
				fn(chunk, nil)
			}
		default:
			keep(chunk)
			var cut []byte
			if n > maxLine {
				cut = tail
			}
			fn(head, cut)
		}
		head, tail, n = head[:0], tail[:0], 0
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
