package syslog

import (
	"bufio"
	"errors"
	"io"
)

// ErrFraming is returned by FrameReader.Next when a stream cannot be split
// into messages any more: an octet count that is not a number, or a
// stream that ends inside a frame. The connection should be closed.
var ErrFraming = errors.New("syslog: bad framing")

// FrameReader splits a TCP syslog stream into messages (RFC 6587). Each
// frame is read the way it starts: a digit is an octet count ("LEN SP
// MSG"), anything else a message ended by a newline (non-transparent
// framing), so one stream may mix both. Its memory is bounded by max
// whatever the sender does.
type FrameReader struct {
	r   *bufio.Reader
	max int
	buf []byte
	// Oversize counts the frames longer than max that were skipped.
	Oversize int
}

// NewFrameReader returns a FrameReader of r that skips frames longer than
// max bytes (newline not counted).
func NewFrameReader(r io.Reader, max int) *FrameReader {
	// bufio's buffer holds a whole newline-framed message and its newline.
	return &FrameReader{r: bufio.NewReaderSize(r, max+1), max: max}
}

// maxCountDigits bounds the octet count: longer counts are not framing.
const maxCountDigits = 9

// Next returns the next message; the slice is valid until the next call.
// Frames longer than the limit are skipped (counted in Oversize), empty
// lines too. It returns io.EOF at a clean end of stream, ErrFraming when
// the stream cannot be framed, or the reader's error.
func (f *FrameReader) Next() ([]byte, error) {
	for {
		c, err := f.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if c >= '0' && c <= '9' {
			msg, skip, err := f.counted(int(c - '0'))
			if err != nil || !skip {
				return msg, err
			}
			continue
		}
		if err := f.r.UnreadByte(); err != nil {
			return nil, err
		}
		msg, skip, err := f.line()
		if err != nil || !skip {
			return msg, err
		}
	}
}

// counted reads the rest of an octet-counted frame whose count began with
// digit n.
func (f *FrameReader) counted(n int) (msg []byte, skip bool, err error) {
	for digits := 1; ; digits++ {
		c, err := f.r.ReadByte()
		if err != nil {
			return nil, false, ErrFraming
		}
		if c == ' ' {
			break
		}
		if c < '0' || c > '9' || digits == maxCountDigits {
			return nil, false, ErrFraming
		}
		n = n*10 + int(c-'0')
	}
	if n > f.max {
		f.Oversize++
		if _, err := f.r.Discard(n); err != nil {
			return nil, false, ErrFraming
		}
		return nil, true, nil
	}
	if cap(f.buf) < n {
		f.buf = make([]byte, n, f.max)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		return nil, false, ErrFraming
	}
	return f.buf, n == 0, nil
}

// line reads a newline-ended frame.
func (f *FrameReader) line() (msg []byte, skip bool, err error) {
	b, err := f.r.ReadSlice('\n')
	switch {
	case err == nil:
		b = b[:len(b)-1]
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
		if len(b) > f.max {
			f.Oversize++
			return nil, true, nil
		}
		return b, len(b) == 0, nil
	case errors.Is(err, bufio.ErrBufferFull):
		// Longer than max: skip through its newline.
		f.Oversize++
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = f.r.ReadSlice('\n')
		}
		if err != nil {
			return nil, false, err
		}
		return nil, true, nil
	case errors.Is(err, io.EOF) && len(b) > 0 && len(b) <= f.max:
		// The last message of a stream may lack its newline.
		return b, false, nil
	default:
		return nil, false, err
	}
}
