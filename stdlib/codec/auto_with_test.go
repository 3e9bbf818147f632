package codec

import "testing"

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"name": "name", "userName": "user_name", "userID": "user_id", "HTTPServer": "http_server",
		"httpServer2": "http_server2", "a1B": "a1_b", "already_snake": "already_snake", "X": "x",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}
