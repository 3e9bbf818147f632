package core

import (
	"net/mail"
	"net/url"
	"strings"

	"skydurable/runtime/value"
)

// stringParityKernels are the String functions real Sky programs call
// beyond Elm's: casefold, equalFold, isEmail, isUrl.
func stringParityKernels() []value.Kernel {
	return []value.Kernel{
		// Upper then lower folds the characters whose lower-case forms
		// differ but whose upper-case forms agree (ſ and s, K and k).
		str1("String_casefold", "String.casefold", func(s string) value.Value { return strings.ToLower(strings.ToUpper(s)) }),
		str2("String_equalFold", "String.equalFold", func(a, b string) value.Value { return strings.EqualFold(a, b) }),
		str1("String_isEmail", "String.isEmail", func(s string) value.Value {
			a, err := mail.ParseAddress(s)
			return err == nil && a.Name == "" && a.Address == s && strings.Contains(s[strings.LastIndexByte(s, '@'):], ".")
		}),
		str1("String_isUrl", "String.isUrl", func(s string) value.Value {
			u, err := url.Parse(s)
			return err == nil && u.Scheme != "" && u.Host != "" && !strings.ContainsAny(s, " \t\n")
		}),
	}
}
