package core

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"io"

	"golang.org/x/crypto/chacha20poly1305"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// secretKind is the value.Opaque kind of a Sky.Core.Secret: it prints as
// <Secret> in Debug.toString, a log or an error, never as its text.
const secretKind = "Secret"

func secretArg(fn string, v value.Value) (string, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == secretKind {
		return o.V.(string), nil
	}
	return "", value.BadArg(fn, "a Secret", v)
}

func secretValue(s string) value.Value { return value.Opaque{Kind: secretKind, V: s} }

// secretKernels are Sky.Core.Secret's (in: fromEnv, fromString; out: reveal)
// and the Crypto functions that take a Secret key: the AEAD ciphers and
// PBKDF2 key derivation.
func secretKernels(env Env) []value.Kernel {
	return []value.Kernel{
		{Name: "Secret_fromEnv", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			name, err := stringArg("Secret.fromEnv", a[0])
			if err != nil {
				return nil, err
			}
			v, _ := env.Process.LookupEnv(name)
			return secretValue(v), nil
		}},
		{Name: "Secret_fromString", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, err := stringArg("Secret.fromString", a[0])
			return secretValue(s), err
		}},
		{Name: "Secret_reveal", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return secretArg("Secret.reveal", a[0])
		}},
		deriveKey("Crypto_aesKeyFromPassword", "Crypto.aesKeyFromPassword"),
		deriveKey("Crypto_chachaKeyFromPassword", "Crypto.chachaKeyFromPassword"),
		seal(env, "Crypto_aesGcmEncrypt", "Crypto.aesGcmEncrypt", newAESGCM, false),
		seal(env, "Crypto_chacha20Encrypt", "Crypto.chacha20Encrypt", chacha20poly1305.New, false),
		seal(env, "Crypto_xchachaSeal", "Crypto.xchachaSeal", chacha20poly1305.NewX, false),
		seal(env, "Crypto_xchachaSealWith", "Crypto.xchachaSealWith", chacha20poly1305.NewX, true),
		open("Crypto_aesGcmDecrypt", "Crypto.aesGcmDecrypt", newAESGCM, false),
		open("Crypto_chacha20Decrypt", "Crypto.chacha20Decrypt", chacha20poly1305.New, false),
		open("Crypto_xchachaOpen", "Crypto.xchachaOpen", chacha20poly1305.NewX, false),
		open("Crypto_xchachaOpenWith", "Crypto.xchachaOpenWith", chacha20poly1305.NewX, true),
		withNonce("Crypto_chacha20Poly1305Seal", "Crypto.chacha20Poly1305Seal", chacha20poly1305.New, true),
		withNonce("Crypto_chacha20Poly1305Open", "Crypto.chacha20Poly1305Open", chacha20poly1305.New, false),
		withNonce("Crypto_xchacha20Poly1305Seal", "Crypto.xchacha20Poly1305Seal", chacha20poly1305.NewX, true),
		withNonce("Crypto_xchacha20Poly1305Open", "Crypto.xchacha20Poly1305Open", chacha20poly1305.NewX, false),
	}
}

// withNonce is a seal or open with the caller's nonce, all arguments raw
// bytes: `key nonce associatedData text -> Result Error String`, the output
// `ciphertext || tag` without the nonce (seal) or the plaintext (open). A
// key, nonce or text of the wrong length, or a failed authentication, is
// an InvalidInput error. Deterministic, so never reuse a nonce with a key.
func withNonce(name, fn string, newAEAD func([]byte) (cipher.AEAD, error), sealing bool) value.Kernel {
	return value.Kernel{Name: name, Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
		key, err := secretArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		texts, err := stringArgs(fn, a[1:])
		if err != nil {
			return nil, err
		}
		nonce, ad, text := texts[0], texts[1], texts[2]
		fail := func(err error) (value.Value, error) { return value.Err(value.FromError(err)), nil }
		aead, err := keyedAEAD(fn, key, newAEAD)
		if err != nil {
			return fail(err)
		}
		if len(nonce) != aead.NonceSize() {
			return fail(task.Errorf(task.InvalidInput, "%s: the nonce is %d bytes, not %d", fn, len(nonce), aead.NonceSize()))
		}
		if sealing {
			return value.Ok(string(aead.Seal(nil, []byte(nonce), []byte(text), []byte(ad)))), nil
		}
		plain, err := aead.Open(nil, []byte(nonce), []byte(text), []byte(ad))
		if err != nil {
			return fail(task.Errorf(task.InvalidInput, "%s: the value does not open with this key, nonce and associated data", fn))
		}
		return value.Ok(string(plain)), nil
	}}
}

func newAESGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// keyedAEAD is the cipher of a 32-byte Secret key; another length is an
// InvalidInput error saying how to make one.
func keyedAEAD(fn string, key string, newAEAD func([]byte) (cipher.AEAD, error)) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, task.Errorf(task.InvalidInput, "%s: the key is %d bytes, not 32; hint: derive one with Crypto.aesKeyFromPassword password salt", fn, len(key))
	}
	return newAEAD([]byte(key))
}

// deriveKey is PBKDF2-HMAC-SHA256 with 100,000 iterations, real Sky's key
// derivation: `password salt -> 32-byte Secret`.
func deriveKey(name, fn string) value.Kernel {
	return value.Kernel{Name: name, Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
		password, err := secretArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		salt, err := stringArg(fn, a[1])
		if err != nil {
			return nil, err
		}
		key, err := pbkdf2.Key(sha256.New, password, []byte(salt), 100_000, 32)
		if err != nil {
			return nil, &value.RuntimeError{Message: fn + ": " + err.Error()}
		}
		return secretValue(string(key)), nil
	}}
}

// seal encrypts with a fresh random nonce from env.Random: a Task giving
// base64(nonce || ciphertext || tag). withAD takes associated data between
// the key and the plaintext.
func seal(env Env, name, fn string, newAEAD func([]byte) (cipher.AEAD, error), withAD bool) value.Kernel {
	return aeadKernel(name, fn, withAD, func(key, ad, plain string) (value.Value, error) {
		return value.Task{T: task.From(func(context.Context) (value.Value, error) {
			aead, err := keyedAEAD(fn, key, newAEAD)
			if err != nil {
				return nil, err
			}
			nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
			if _, err := io.ReadFull(env.Random, nonce); err != nil {
				return nil, task.Errorf(task.Unavailable, "%s: reading a random nonce: %w", fn, err)
			}
			return base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(plain), []byte(ad))), nil
		})}, nil
	})
}

// aeadKernel is a cipher kernel `Secret -> [associatedData ->] String -> r`:
// it reads the key and the texts and gives them to run.
func aeadKernel(name, fn string, withAD bool, run func(key, ad, text string) (value.Value, error)) value.Kernel {
	arity := 2
	if withAD {
		arity = 3
	}
	return value.Kernel{Name: name, Arity: arity, Fn: func(a []value.Value) (value.Value, error) {
		key, err := secretArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		texts, err := stringArgs(fn, a[1:])
		if err != nil {
			return nil, err
		}
		ad := ""
		if withAD {
			ad = texts[0]
		}
		return run(key, ad, texts[len(texts)-1])
	}}
}

// open decrypts what seal made: Ok the plaintext, or Err InvalidInput for a
// wrong key, tampered or truncated text, bad base64 or other associated data.
func open(name, fn string, newAEAD func([]byte) (cipher.AEAD, error), withAD bool) value.Kernel {
	return aeadKernel(name, fn, withAD, func(key, ad, sealed string) (value.Value, error) {
		fail := func(err error) (value.Value, error) { return value.Err(value.FromError(err)), nil }
		aead, err := keyedAEAD(fn, key, newAEAD)
		if err != nil {
			return fail(err)
		}
		raw, err := base64.StdEncoding.DecodeString(sealed)
		if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
			return fail(task.Errorf(task.InvalidInput, "%s: the text is not a sealed value (base64 of nonce, ciphertext and tag)", fn))
		}
		plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(ad))
		if err != nil {
			return fail(task.Errorf(task.InvalidInput, "%s: the value does not open with this key (a wrong key, other associated data, or the text was changed)", fn))
		}
		return value.Ok(string(plain)), nil
	})
}
