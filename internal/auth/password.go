// Package auth holds the secrets of wnms: password hashing (argon2id),
// session tokens, API-key hashing, and the rules of who may do what.
package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are the argon2id cost parameters for new password hashes.
// Verification reads the parameters from the stored hash, so changing
// these affects only new hashes.
type Argon2Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// DefaultArgon2 follows the OWASP recommendation (19 MiB, 2 passes).
var DefaultArgon2 = Argon2Params{Memory: 19 * 1024, Time: 2, Threads: 1}

// MinPasswordLength is the shortest password accepted (api.md §6).
const MinPasswordLength = 8

// HashPassword hashes a password with argon2id into a PHC string.
func HashPassword(password string, p Argon2Params) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches a PHC argon2id hash. An
// empty or malformed hash never matches.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var v int
	var p Argon2Params
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false
	}
	if p.Memory == 0 || p.Memory > 1<<21 || p.Time == 0 || p.Time > 16 || p.Threads == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 64 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// RandomToken returns n random bytes encoded URL-safe without padding.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewSessionToken returns a 256-bit random session token (the JSESSIONID).
func NewSessionToken() string { return RandomToken(32) }

// TokenHash is the hash under which the store knows a session token, so
// that a copy of the database opens no session.
func TokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// NewKeyID returns a new public API key id.
func NewKeyID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return "wk" + hex.EncodeToString(b)
}

// NewKeyValue returns a new 256-bit API key secret.
func NewKeyValue() string { return RandomToken(32) }

// KeyHash is the keyed hash (HMAC-SHA256 under the server secret) under
// which the store keeps an API key value. The key id is bound in so a hash
// cannot be moved to another key.
func KeyHash(secret []byte, keyID, keyValue string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(keyID))
	m.Write([]byte{0})
	m.Write([]byte(keyValue))
	return m.Sum(nil)
}

// CheckKey reports whether keyValue matches the stored hash of keyID.
func CheckKey(secret []byte, keyID, keyValue string, hash []byte) bool {
	return hmac.Equal(KeyHash(secret, keyID, keyValue), hash)
}

// CheckPasswordRules validates a new password.
func CheckPasswordRules(pw string) error {
	if len([]rune(pw)) < MinPasswordLength {
		return fmt.Errorf("must be at least %d characters", MinPasswordLength)
	}
	if len(pw) > 1024 {
		return errors.New("must be at most 1024 bytes")
	}
	return nil
}
