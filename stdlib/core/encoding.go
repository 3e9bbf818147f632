package core

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// encodingKernels are Sky.Core.Encoding's: text forms of bytes with Go's
// encoding packages. Encoding cannot fail; decoding gives a Result whose
// error is InvalidInput naming the function (the decoders accept only the
// canonical text: padding and alphabet exactly as the encoder writes them).
func encodingKernels() []value.Kernel {
	decoder := func(name, fn string, decode func(string) ([]byte, error)) value.Kernel {
		return str1(name, fn, func(s string) value.Value {
			b, err := decode(s)
			if err != nil {
				return value.Err(value.FromError(task.Errorf(task.InvalidInput, "%s: the text is not valid: %v", fn, err)))
			}
			return value.Ok(string(b))
		})
	}
	b32 := base32.StdEncoding
	b32raw := base32.StdEncoding.WithPadding(base32.NoPadding)
	b32hex := base32.HexEncoding
	// canonical decodes base32 text only when it is exactly what the encoder
	// writes (no line breaks, lower case or stray bits), so one byte string
	// has one accepted text.
	canonical := func(enc *base32.Encoding) func(string) ([]byte, error) {
		return func(s string) ([]byte, error) {
			b, err := enc.DecodeString(s)
			if err == nil && enc.EncodeToString(b) != s {
				err = errors.New("not the canonical text of any bytes")
			}
			return b, err
		}
	}
	return []value.Kernel{
		str1("Encoding_base64Encode", "Encoding.base64Encode", func(s string) value.Value { return base64.StdEncoding.EncodeToString([]byte(s)) }),
		decoder("Encoding_base64Decode", "Encoding.base64Decode", base64.StdEncoding.Strict().DecodeString),
		str1("Encoding_base32Encode", "Encoding.base32Encode", func(s string) value.Value { return b32.EncodeToString([]byte(s)) }),
		decoder("Encoding_base32Decode", "Encoding.base32Decode", canonical(b32)),
		str1("Encoding_base32EncodeNoPad", "Encoding.base32EncodeNoPad", func(s string) value.Value { return b32raw.EncodeToString([]byte(s)) }),
		decoder("Encoding_base32DecodeNoPad", "Encoding.base32DecodeNoPad", canonical(b32raw)),
		str1("Encoding_base32HexEncode", "Encoding.base32HexEncode", func(s string) value.Value { return b32hex.EncodeToString([]byte(s)) }),
		decoder("Encoding_base32HexDecode", "Encoding.base32HexDecode", canonical(b32hex)),
		str1("Encoding_urlEncode", "Encoding.urlEncode", func(s string) value.Value { return url.QueryEscape(s) }),
		decoder("Encoding_urlDecode", "Encoding.urlDecode", func(s string) ([]byte, error) { d, err := url.QueryUnescape(s); return []byte(d), err }),
		str1("Encoding_hexEncode", "Encoding.hexEncode", func(s string) value.Value { return hex.EncodeToString([]byte(s)) }),
		decoder("Encoding_hexDecode", "Encoding.hexDecode", hex.DecodeString),
	}
}

// bytesKernels are Sky.Core.Bytes's: a String's length and slices by byte,
// where String counts characters.
func bytesKernels() []value.Kernel {
	return []value.Kernel{
		str1("Bytes_length", "Bytes.length", func(s string) value.Value { return int64(len(s)) }),
		{Name: "Bytes_slice", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			start, err := intArg("Bytes.slice", a[0])
			if err != nil {
				return nil, err
			}
			end, err := intArg("Bytes.slice", a[1])
			if err != nil {
				return nil, err
			}
			s, ok := a[2].(string)
			if !ok {
				return nil, value.BadArg("Bytes.slice", "Bytes (a String)", a[2])
			}
			n := int64(len(s))
			clamp := func(i int64) int64 {
				if i < 0 {
					i += n
				}
				return max(0, min(i, n))
			}
			from, to := clamp(start), clamp(end)
			if from >= to {
				return "", nil
			}
			return s[from:to], nil
		}},
	}
}
