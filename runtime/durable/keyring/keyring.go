// Package keyring is encryption at rest for durable payloads: a Ring of
// named AES-256-GCM keys (the first seals, every one opens), parsed from
// SKY_DURABLE_KEYS ("k2:BASE64,k1:BASE64"), and the sealed form a payload
// takes in the database.
//
// A sealed value is the text
//
//	skyenc1:<key id>:<base64 of nonce ‖ ciphertext ‖ tag>
//
// which no plain payload can be: the engine stores only valid JSON, and no
// JSON text begins with "s". The key id is in the clear so that a reader
// without that key can say which one it lacks ("encrypted (key k1)"). Each
// value is sealed with associated data naming its place (the run id and
// the entry: input, output, a step, a signal, an event), so a sealed value
// copied to another place does not open.
//
// It may import only the standard library, so that the engine and the
// read-side packages (runtime/durable/view) share it.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Prefix begins every sealed value.
const Prefix = "skyenc1:"

// KeySize is the length of a key in bytes (AES-256).
const KeySize = 32

// maxIDLen bounds a key id.
const maxIDLen = 32

// ErrNoKey is wrapped by Open's error for a value sealed with a key the
// ring does not hold.
var ErrNoKey = errors.New("keyring: the key is not in the keyring")

// ErrNotOpened is wrapped by Open's error for a value that does not open
// with its key: it was altered, moved from another place, or that key id
// now names other key material.
var ErrNotOpened = errors.New("keyring: the sealed value does not open")

// Ring is a list of keys: the first seals, every one opens. A nil *Ring
// seals nothing and opens only plain values.
type Ring struct {
	ids   []string
	aeads map[string]cipher.AEAD
	// scope is put before every run id in the associated data (Scoped).
	scope string
}

// Scoped is r sealing and opening within scope (a namespace's id prefix):
// the associated data of every value is scope + run id, so a value sealed
// for run "r" of one namespace does not open as run "r" of another, even
// under the same key. The empty scope is r itself (the default namespace:
// values sealed before namespaces still open); a nil ring stays nil.
func (r *Ring) Scoped(scope string) *Ring {
	if r == nil || scope == "" {
		return r
	}
	c := *r
	c.scope = scope
	return &c
}

// Parse reads a keyring written "id:BASE64,id:BASE64" (the first entry
// seals). A key is 32 bytes, in standard or URL base64, padded or not; an
// id is 1 to 32 letters, digits, '-' or '_', unique in the ring. An empty
// text is no keyring (nil, nil). The error names the bad entry by its
// position and id, never by its key material.
func Parse(text string) (*Ring, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	r := &Ring{aeads: map[string]cipher.AEAD{}}
	for i, entry := range strings.Split(text, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok {
			return nil, fmt.Errorf("SKY_DURABLE_KEYS entry %d is not id:BASE64; hint: write k1:BASE64 (a key from `openssl rand -base64 32`), entries separated by commas", i+1)
		}
		if err := checkID(id); err != nil {
			return nil, fmt.Errorf("SKY_DURABLE_KEYS entry %d: %w", i+1, err)
		}
		if _, dup := r.aeads[id]; dup {
			return nil, fmt.Errorf("SKY_DURABLE_KEYS entry %d: key id %q appears twice; hint: give each key its own id (k1, k2, ...)", i+1, id)
		}
		key, err := decodeKey(b64)
		if err != nil {
			return nil, fmt.Errorf("SKY_DURABLE_KEYS entry %d (key %q): the key is not base64; hint: make one with `openssl rand -base64 32`", i+1, id)
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("SKY_DURABLE_KEYS entry %d (key %q): the key is %d bytes, AES-256 needs %d; hint: make one with `openssl rand -base64 32`", i+1, id, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("SKY_DURABLE_KEYS entry %d (key %q): %w", i+1, id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("SKY_DURABLE_KEYS entry %d (key %q): %w", i+1, id, err)
		}
		r.ids = append(r.ids, id)
		r.aeads[id] = aead
	}
	return r, nil
}

// checkID refuses an empty, long or oddly spelled key id.
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("the key id %q must be 1 to %d characters; hint: k1, k2, 2026-06", id, maxIDLen)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("the key id %q has %q; hint: use letters, digits, '-' and '_' only", id, c)
		}
	}
	return nil
}

// decodeKey reads standard or URL base64, padded or not.
func decodeKey(b64 string) ([]byte, error) {
	b64 = strings.TrimRight(strings.TrimSpace(b64), "=")
	if k, err := base64.RawStdEncoding.DecodeString(b64); err == nil {
		return k, nil
	}
	return base64.RawURLEncoding.DecodeString(b64)
}

// Primary is the id of the key that seals ("" for a nil ring).
func (r *Ring) Primary() string {
	if r == nil {
		return ""
	}
	return r.ids[0]
}

// IDs lists the ring's key ids, the sealing one first.
func (r *Ring) IDs() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.ids...)
}

// Has reports whether the ring holds key id.
func (r *Ring) Has(id string) bool {
	if r == nil {
		return false
	}
	_, ok := r.aeads[id]
	return ok
}

// Seal encrypts plain with the primary key for the place (runID, entry).
// A nil ring returns plain unchanged.
func (r *Ring) Seal(runID, entry, plain string) string {
	if r == nil {
		return plain
	}
	id := r.ids[0]
	aead := r.aeads[id]
	buf := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		panic("keyring: the system's random source failed: " + err.Error())
	}
	buf = aead.Seal(buf, buf, []byte(plain), place(r.scope+runID, entry))
	var b strings.Builder
	b.Grow(len(Prefix) + len(id) + 1 + base64.RawStdEncoding.EncodedLen(len(buf)))
	b.WriteString(Prefix)
	b.WriteString(id)
	b.WriteByte(':')
	b.WriteString(base64.RawStdEncoding.EncodeToString(buf))
	return b.String()
}

// Open returns the plain text of a value stored at (runID, entry): a plain
// value as it is, a sealed one decrypted. Its error wraps ErrNoKey when the
// ring lacks the value's key and ErrNotOpened when the value does not open.
func (r *Ring) Open(runID, entry, text string) (string, error) {
	id, ok := KeyOf(text)
	if !ok {
		return text, nil
	}
	aead := r.aead(id)
	if aead == nil {
		return "", fmt.Errorf("%w: the value is encrypted with key %q, the keyring holds %s; hint: add key %s to SKY_DURABLE_KEYS (after the first)", ErrNoKey, id, r.held(), id)
	}
	raw, err := base64.RawStdEncoding.DecodeString(text[len(Prefix)+len(id)+1:])
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("%w: the value sealed with key %q is truncated or altered", ErrNotOpened, id)
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:n], raw[n:], place(r.scope+runID, entry))
	if err != nil {
		return "", fmt.Errorf("%w: the value sealed with key %q does not open at %s of run %q: it was altered or copied from elsewhere, or key %q is not the key it was sealed with", ErrNotOpened, id, entry, runID, id)
	}
	return string(plain), nil
}

func (r *Ring) aead(id string) cipher.AEAD {
	if r == nil {
		return nil
	}
	return r.aeads[id]
}

// held says which keys the ring holds, for an error.
func (r *Ring) held() string {
	if r == nil {
		return "no key (SKY_DURABLE_KEYS is not set)"
	}
	return "keys " + strings.Join(r.ids, ", ")
}

// place is the associated data of the value at (runID, entry).
func place(runID, entry string) []byte {
	b := make([]byte, 0, len("sky-durable\x00\x00")+len(runID)+len(entry))
	b = append(b, "sky-durable\x00"...)
	b = append(b, runID...)
	b = append(b, 0)
	return append(b, entry...)
}

// KeyOf reports whether text is a sealed value, and the id of its key.
func KeyOf(text string) (id string, sealed bool) {
	rest, ok := strings.CutPrefix(text, Prefix)
	if !ok {
		return "", false
	}
	id, _, ok = strings.Cut(rest, ":")
	return id, ok
}

// Describe is what a reader without the key shows for a sealed value:
// "encrypted (key k1)".
func Describe(id string) string {
	return fmt.Sprintf("encrypted (key %s)", id)
}
