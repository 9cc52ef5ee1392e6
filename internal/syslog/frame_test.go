package syslog

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readFrames reads every frame of stream with a limit of max.
func readFrames(stream string, max int, oneByte bool) (frames []string, oversize int, err error) {
	var r io.Reader = strings.NewReader(stream)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	f := NewFrameReader(r, max)
	for {
		b, err := f.Next()
		if err != nil {
			return frames, f.Oversize, err
		}
		frames = append(frames, string(b))
	}
}

func TestFrameReader(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		name     string
		stream   string
		want     []string
		oversize int
		err      error
	}{
		{"newline", "<13>a\n<13>b\r\n\n<13>c", []string{"<13>a", "<13>b", "<13>c"}, 0, io.EOF},
		{"octet counting", "5 <13>a5 <13>b0 3 <1>", []string{"<13>a", "<13>b", "<1>"}, 0, io.EOF},
		{"mixed per frame", "5 <13>a<13>b\n6 <13>cd\n", []string{"<13>a", "<13>b", "<13>cd"}, 0, io.EOF},
		{"exactly the limit", "32 " + long[:32] + long[:32] + "\n", []string{long[:32], long[:32]}, 0, io.EOF},
		{"oversize newline skipped", "<1>a\n" + long + "\n<1>b\n", []string{"<1>a", "<1>b"}, 1, io.EOF},
		{"oversize at end of stream", "<1>a\n" + long, []string{"<1>a"}, 1, io.EOF},
		{"oversize counted skipped", "40 " + long + "4 <1>b", []string{"<1>b"}, 1, io.EOF},
		{"count not a number", "5x <13>a", nil, 0, ErrFraming},
		{"count too long", "1234567890 x", nil, 0, ErrFraming},
		{"stream ends inside a counted frame", "10 <13>a", nil, 0, ErrFraming},
		{"stream ends inside an oversize counted frame", "99 x", nil, 1, ErrFraming},
		{"stream ends inside a count", "12", nil, 0, ErrFraming},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			got, oversize, err := readFrames(tt.stream, 32, oneByte)
			if !errors.Is(err, tt.err) {
				t.Errorf("%s (one byte %v): err %v, want %v", tt.name, oneByte, err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (one byte %v): frames (-want +got):\n%s", tt.name, oneByte, diff)
			}
			if oversize != tt.oversize {
				t.Errorf("%s (one byte %v): oversize %d, want %d", tt.name, oneByte, oversize, tt.oversize)
			}
		}
	}
}

// A sender that never ends its line costs the reader its limit, no more.
func TestFrameReaderBoundedMemory(t *testing.T) {
	const max = 8 << 10
	endless := io.LimitReader(infinite('x'), 64<<20)
	f := NewFrameReader(io.MultiReader(endless, strings.NewReader("\n<13>ok\n")), max)
	var ms1, ms2 runtimeMem
	ms1.read()
	b, err := f.Next()
	ms2.read()
	if err != nil || string(b) != "<13>ok" {
		t.Fatalf("Next = %q, %v; want <13>ok", b, err)
	}
	if f.Oversize != 1 {
		t.Errorf("Oversize = %d, want 1", f.Oversize)
	}
	if grew := ms2.total - ms1.total; grew > 1<<20 {
		t.Errorf("reading a 64 MiB line allocated %d bytes", grew)
	}
}

type infinite byte

func (c infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}
