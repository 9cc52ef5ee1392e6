package syslog

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is one syslog message, RFC 3164 or RFC 5424, as Parse reads it.
type Message struct {
	Facility int // 0 to 23
	Severity int // 0 (emergency) to 7 (debug)
	// Time is the header's timestamp, or the zero time when the header
	// has none (RFC 5424's "-", or an RFC 3164 line without one).
	Time    time.Time
	Host    string // the HOSTNAME field, "" when absent
	Program string // RFC 5424 APP-NAME, RFC 3164 TAG without its [pid]
	PID     string // RFC 5424 PROCID or the RFC 3164 tag's [pid], "" when absent
	MsgID   string // RFC 5424 MSGID, "" when absent
	Text    string // the message itself, without structured data
	RFC5424 bool   // the message had the RFC 5424 header
	// WholeSeconds says Time was written without fractions of a second
	// (RFC 3164's "Mmm dd hh:mm:ss", or an RFC 5424 timestamp without
	// them): two such lines a few milliseconds apart may show the same
	// second or a second apart.
	WholeSeconds bool
}

// ErrNotSyslog is returned by Parse for input that is not a syslog message:
// no <PRI> at its start, a PRI out of range, or an RFC 5424 header that
// does not hold together.
var ErrNotSyslog = errors.New("syslog: not a syslog message")

// Parse reads one syslog message (without its transport framing) received
// at now. Both RFC 5424 and the many RFC 3164 dialects are accepted:
// "Mmm dd hh:mm:ss" timestamps with or without a year or fractions of a
// second, RFC 3339 timestamps in RFC 3164 position (rsyslog's forwarding
// formats), a missing hostname (busybox syslogd, OpenWrt logd), a missing
// timestamp, and tags with or without "[pid]". An RFC 3164 timestamp has no
// year and no zone: it is read in loc (nil: UTC) in the year that puts it
// nearest to now. Trailing newlines and NULs are ignored. Invalid UTF-8 is
// kept as sent. The only error is ErrNotSyslog.
func Parse(b []byte, now time.Time, loc *time.Location) (Message, error) {
	b = bytes.TrimRight(b, "\r\n\x00")
	var m Message
	if len(b) < 3 || b[0] != '<' {
		return m, ErrNotSyslog
	}
	end := bytes.IndexByte(b[:min(len(b), 5)], '>')
	if end < 2 {
		return m, ErrNotSyslog
	}
	pri := 0
	for _, c := range b[1:end] {
		if c < '0' || c > '9' {
			return m, ErrNotSyslog
		}
		pri = pri*10 + int(c-'0')
	}
	if pri > 191 || (end > 2 && b[1] == '0') {
		return m, ErrNotSyslog
	}
	m.Facility, m.Severity = pri/8, pri%8
	rest := string(b[end+1:])
	if len(rest) >= 2 && rest[0] >= '1' && rest[0] <= '9' && rest[1] == ' ' {
		if err := parse5424(&m, rest[2:]); err != nil {
			return Message{}, err
		}
		return m, nil
	}
	parse3164(&m, rest, now, loc)
	return m, nil
}

// parse5424 reads an RFC 5424 message after "VERSION ".
func parse5424(m *Message, s string) error {
	m.RFC5424 = true
	var fields [5]string
	for i := range fields {
		sp := strings.IndexByte(s, ' ')
		if sp < 0 {
			// A message may end after MSGID or SD, never before.
			if i < 4 {
				return ErrNotSyslog
			}
			fields[i], s = s, ""
			break
		}
		fields[i], s = s[:sp], s[sp+1:]
	}
	ts, host, app, proc, msgid := fields[0], fields[1], fields[2], fields[3], fields[4]
	if ts != "-" {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return ErrNotSyslog
		}
		m.Time, m.WholeSeconds = t, !strings.Contains(ts, ".")
	}
	for _, f := range []struct {
		dst *string
		v   string
		max int
	}{{&m.Host, host, 255}, {&m.Program, app, 48}, {&m.PID, proc, 128}, {&m.MsgID, msgid, 32}} {
		if f.v == "" || len(f.v) > f.max {
			return ErrNotSyslog
		}
		if f.v != "-" {
			*f.dst = f.v
		}
	}
	// Structured data: "-" or one or more [id param="value" ...] elements,
	// whose values may hold escaped \" \] and \\.
	switch {
	case strings.HasPrefix(s, "-"):
		s = s[1:]
	case strings.HasPrefix(s, "["):
		for strings.HasPrefix(s, "[") {
			n, ok := sdElementLen(s)
			if !ok {
				return ErrNotSyslog
			}
			s = s[n:]
		}
	case fields[4] != "" && s == "":
		// No SD and no MSG: MSGID ended the message (tolerated).
	default:
		return ErrNotSyslog
	}
	if s != "" {
		if s[0] != ' ' {
			return ErrNotSyslog
		}
		s = s[1:]
	}
	m.Text = strings.TrimPrefix(s, "\ufeff")
	return nil
}

// sdElementLen returns the length of the SD-ELEMENT at the start of s.
func sdElementLen(s string) (int, bool) {
	inQuote := false
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\' && i+1 < len(s):
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == ']':
			return i + 1, true
		}
	}
	return 0, false
}

var months = map[string]time.Month{"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
	"Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}

// parse3164 reads the RFC 3164 part after <PRI>: it never fails, as RFC
// 3164 makes anything after the PRI a valid message.
func parse3164(m *Message, s string, now time.Time, loc *time.Location) {
	if loc == nil {
		loc = time.UTC
	}
	if t, n, ok := stamp3164(s, now, loc); ok {
		m.Time, m.WholeSeconds, s = t, !strings.Contains(s[:n], "."), s[n:]
		s = strings.TrimLeft(s, " ")
		// HOSTNAME, unless the first word is already the tag (no hostname,
		// as busybox and OpenWrt send): a tag ends with ':' or has a [pid].
		if sp := strings.IndexByte(s, ' '); sp > 0 {
			word := s[:sp]
			if !strings.HasSuffix(word, ":") && !strings.Contains(word, "[") {
				m.Host, s = word, s[sp+1:]
			}
		}
	}
	m.Program, m.PID, m.Text = splitTag(s)
}

// splitTag splits "tag[pid]: text" or "tag: text". Text without a tag is
// returned whole.
func splitTag(s string) (program, pid, text string) {
	i := strings.IndexAny(s, ":[ ")
	if i <= 0 || i > 48 {
		return "", "", s
	}
	tag := s[:i]
	rest := s[i:]
	if rest[0] == '[' {
		end := strings.IndexByte(rest, ']')
		if end < 0 || end > 24 {
			return "", "", s
		}
		pid, rest = rest[1:end], rest[end+1:]
	}
	switch {
	case strings.HasPrefix(rest, ":"):
		rest = rest[1:]
	case pid != "" && (rest == "" || rest[0] == ' '):
		// "tag[pid] text": some senders omit the colon.
	default:
		return "", "", s
	}
	if !utf8.ValidString(tag) {
		return "", "", s
	}
	return tag, pid, strings.TrimPrefix(rest, " ")
}

// stamp3164 reads a timestamp at the start of s: "Mmm dd hh:mm:ss" (the day
// space- or zero-padded), optionally with fractions of a second and/or a
// year ("Mmm dd yyyy hh:mm:ss"), or an RFC 3339 timestamp. It returns the
// time and the bytes read.
func stamp3164(s string, now time.Time, loc *time.Location) (time.Time, int, bool) {
	if len(s) >= 19 && s[0] >= '0' && s[0] <= '9' {
		end := strings.IndexByte(s, ' ')
		if end < 0 {
			end = len(s)
		}
		if t, err := time.Parse(time.RFC3339Nano, s[:end]); err == nil {
			return t, end, true
		}
		return time.Time{}, 0, false
	}
	if len(s) < 15 || s[3] != ' ' {
		return time.Time{}, 0, false
	}
	mon, ok := months[s[:3]]
	if !ok {
		return time.Time{}, 0, false
	}
	day, ok := atoiPad(s[4:6])
	if !ok || day < 1 || day > 31 || s[6] != ' ' {
		return time.Time{}, 0, false
	}
	i, year := 7, 0
	if len(s) >= 20 && s[11] == ' ' && s[9] != ':' {
		y, err := strconv.Atoi(s[7:11])
		if err != nil || y < 1970 || y > 9999 {
			return time.Time{}, 0, false
		}
		i, year = 12, y
	}
	if len(s) < i+8 || s[i+2] != ':' || s[i+5] != ':' {
		return time.Time{}, 0, false
	}
	hh, ok1 := atoiPad(s[i : i+2])
	mm, ok2 := atoiPad(s[i+3 : i+5])
	ss, ok3 := atoiPad(s[i+6 : i+8])
	if !ok1 || !ok2 || !ok3 || hh > 23 || mm > 59 || ss > 60 {
		return time.Time{}, 0, false
	}
	i += 8
	nsec := 0
	if i < len(s) && s[i] == '.' {
		j, scale := i+1, int(time.Second)
		for ; j < len(s) && j < i+10 && s[j] >= '0' && s[j] <= '9'; j++ {
			scale /= 10
			nsec += int(s[j]-'0') * scale
		}
		if j == i+1 {
			return time.Time{}, 0, false
		}
		i = j
	}
	if i < len(s) && s[i] != ' ' {
		return time.Time{}, 0, false
	}
	if year != 0 {
		return time.Date(year, mon, day, hh, mm, ss, nsec, loc), i, true
	}
	// No year: the one of last, this and next year nearest to now (a
	// December line read in January is last year's).
	var best time.Time
	for _, y := range []int{now.Year() - 1, now.Year(), now.Year() + 1} {
		t := time.Date(y, mon, day, hh, mm, ss, nsec, loc)
		if best.IsZero() || absDur(t.Sub(now)) < absDur(best.Sub(now)) {
			best = t
		}
	}
	return best, i, true
}

// atoiPad reads two digits, the first of which may be a space.
func atoiPad(s string) (int, bool) {
	n := 0
	for k, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		case c == ' ' && k == 0:
		default:
			return 0, false
		}
	}
	return n, s != "  "
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
