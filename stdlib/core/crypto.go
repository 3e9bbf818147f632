package core

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"hash"
	"io"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// cryptoKernels are Sky.Core.Crypto's: hex digests and HMACs of a String's
// bytes, a constant-time comparison, RSASSA-PKCS1-v1_5 over SHA-256, and
// random bytes read from env.Random (crypto/rand in a real run).
func cryptoKernels(env Env) []value.Kernel {
	digest := func(name, fn string, h func() hash.Hash) value.Kernel {
		return str1(name, fn, func(s string) value.Value {
			d := h()
			d.Write([]byte(s))
			return hex.EncodeToString(d.Sum(nil))
		})
	}
	mac := func(name, fn string, h func() hash.Hash) value.Kernel {
		return str2(name, fn, func(key, msg string) value.Value {
			m := hmac.New(h, []byte(key))
			m.Write([]byte(msg))
			return hex.EncodeToString(m.Sum(nil))
		})
	}
	random := func(name, fn string, encode func([]byte) string) value.Kernel {
		return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			n, err := intArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if n < 1 || n > 1024 {
					return nil, task.Errorf(task.InvalidInput, "%s %d: the byte count is from 1 to 1024; hint: 16 or 32 bytes make a good token", fn, n)
				}
				b := make([]byte, n)
				if _, err := io.ReadFull(env.Random, b); err != nil {
					return nil, task.Errorf(task.Unavailable, "%s: reading random bytes: %w", fn, err)
				}
				return encode(b), nil
			})}, nil
		}}
	}
	return []value.Kernel{
		digest("Crypto_sha256", "Crypto.sha256", sha256.New),
		digest("Crypto_sha512", "Crypto.sha512", sha512.New),
		digest("Crypto_sha1", "Crypto.sha1", sha1.New),
		digest("Crypto_md5", "Crypto.md5", md5.New),
		mac("Crypto_hmacSha256", "Crypto.hmacSha256", sha256.New),
		mac("Crypto_hmacSha512", "Crypto.hmacSha512", sha512.New),
		str2("Crypto_constantTimeEqual", "Crypto.constantTimeEqual", func(a, b string) value.Value {
			return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
		}),
		random("Crypto_randomBytes", "Crypto.randomBytes", hex.EncodeToString),
		random("Crypto_randomToken", "Crypto.randomToken", base64.RawURLEncoding.EncodeToString),
		str2("Crypto_rsaSha256Sign", "Crypto.rsaSha256Sign", rsaSign),
		{Name: "Crypto_rsaSha256Verify", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			ss, err := stringArgs("Crypto.rsaSha256Verify", a)
			if err != nil {
				return nil, err
			}
			return rsaVerify(ss[0], ss[1], ss[2]), nil
		}},
	}
}

// rsaSign signs msg with a PEM private key (PKCS#1 or PKCS#8): Ok the
// standard-base64 signature, or Err InvalidInput saying what the key is not.
func rsaSign(pemKey, msg string) value.Value {
	fail := func(format string, args ...any) value.Value {
		return value.Err(value.FromError(task.Errorf(task.InvalidInput, "Crypto.rsaSha256Sign: "+format, args...)))
	}
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return fail("the key is not PEM text; hint: pass the whole -----BEGIN PRIVATE KEY----- block")
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = k
	} else if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return fail("the %s key is not an RSA key", block.Type)
		}
		key = rk
	} else {
		return fail("the %s block is not an RSA private key (PKCS#1 or PKCS#8)", block.Type)
	}
	sum := sha256.Sum256([]byte(msg))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		return fail("%v", err)
	}
	return value.Ok(base64.StdEncoding.EncodeToString(sig))
}

// rsaVerify reports whether sig (standard base64) is msg's RS256 signature
// under a PEM public key (PKIX or PKCS#1); any parse failure is False.
func rsaVerify(pemKey, msg, sig string) bool {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return false
	}
	var key *rsa.PublicKey
	if k, err := x509.ParsePKIXPublicKey(block.Bytes); err == nil {
		key, _ = k.(*rsa.PublicKey)
	} else if k, err := x509.ParsePKCS1PublicKey(block.Bytes); err == nil {
		key = k
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if key == nil || err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(msg))
	return rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], raw) == nil
}
