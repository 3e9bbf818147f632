package core

import (
	"fmt"

	"skydurable/runtime/value"
)

// stringBytesKernels convert between a String and its UTF-8 bytes as real
// Sky's String.toBytes and String.fromBytes do (a List Int, each 0 to 255),
// and give a String's first character (String.toChar).
func stringBytesKernels() []value.Kernel {
	return []value.Kernel{
		str1("String_toBytes", "String.toBytes", func(s string) value.Value {
			out := make([]value.Value, len(s))
			for i := 0; i < len(s); i++ {
				out[i] = int64(s[i])
			}
			return value.FromSlice(out)
		}),
		{Name: "String_fromBytes", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("String.fromBytes", a[0])
			if err != nil {
				return nil, err
			}
			var b []byte
			for i := 0; l != nil; l, i = l.Tail, i+1 {
				n, err := intArg("String.fromBytes", l.Head)
				if err != nil {
					return nil, err
				}
				if n < 0 || n > 255 {
					return nil, fmt.Errorf("String.fromBytes: element %d is %d, not a byte; hint: each element must be 0 to 255 (String.toBytes gives such a list)", i, n)
				}
				b = append(b, byte(n))
			}
			return string(b), nil
		}},
		str1("String_toChar", "String.toChar", func(s string) value.Value {
			for _, r := range s {
				return r
			}
			return rune(0)
		}),
	}
}
