package wnms

// MACBits is the 48 bits of a MAC in the form wnms stores ("00:1A:2B:3C:4D:5E":
// upper case, colon-separated), for keys of per-client state that should
// not keep the text; false for any other text.
func MACBits(m string) (uint64, bool) {
	if len(m) != 17 {
		return 0, false
	}
	var v uint64
	for i := 0; i < 17; i++ {
		c := m[i]
		if i%3 == 2 {
			if c != ':' {
				return 0, false
			}
			continue
		}
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// MACText is the MAC of MACBits's bits, in the form wnms stores.
func MACText(bits uint64) string {
	const hex = "0123456789ABCDEF"
	var b [17]byte
	for i := 5; i >= 0; i-- {
		o := byte(bits >> (8 * (5 - i)))
		b[i*3], b[i*3+1] = hex[o>>4], hex[o&15]
		if i < 5 {
			b[i*3+2] = ':'
		}
	}
	return string(b[:])
}
