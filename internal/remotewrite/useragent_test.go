package remotewrite

import (
	"regexp"
	"runtime/debug"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// userAgentGrammar is RFC 9110's User-Agent (section 10.1.5), written out from its ABNF apart
// from the code under test:
//
//	User-Agent      = product *( RWS ( product / comment ) )
//	product         = token [ "/" product-version ]
//	product-version = token
//	token           = 1*tchar
//	tchar           = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
//	                  "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
//
// A comment is taken without nesting, which is all a User-Agent of ours could hold.
var userAgentGrammar = func() *regexp.Regexp {
	const token = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+"
	const product = token + "(?:/" + token + ")?"
	const comment = `\((?:[\t \x21-\x27\x2a-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*\)`
	return regexp.MustCompile("^" + product + "(?:[ \t]+(?:" + product + "|" + comment + "))*$")
}()

// TestUserAgentIsRFC9110Product: the User-Agent a test binary sends parses as an RFC 9110
// product. A test binary has no VCS stamping (its module version is "(devel)", as a
// -buildvcs=false build's), the case that sent tsbench/(devel) (issue 37).
func TestUserAgentIsRFC9110Product(t *testing.T) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		t.Logf("test binary's module version %q", bi.Main.Version)
	}
	synctest.Test(t, func(t *testing.T) {
		rc := memReceiver(t, nil)
		run(t, map[string]config.Storage{"s": writeTo("http://s.test")}, memNet{"s.test": rc}, time.Second, nil)
		ua := rc.headers.Get("User-Agent")
		if !userAgentGrammar.MatchString(ua) {
			t.Errorf("User-Agent %q is not an RFC 9110 product", ua)
		}
		if ua != "tsbench/"+version() {
			t.Errorf("User-Agent %q, want tsbench/%s", ua, version())
		}
	})
}

func TestProductVersion(t *testing.T) {
	for _, tc := range []struct{ version, revision, want string }{
		{"(devel)", "", "devel"}, // go test, -buildvcs=false
		{"(devel)", "0123456789abcdef0123", "devel-0123456789ab"},
		{"", "", "devel"},
		{"v1.2.3", "0123456789abcdef", "v1.2.3"},
		{"v0.0.0-20260101120000-0123456789ab+dirty", "0123456789ab", "v0.0.0-20260101120000-0123456789ab+dirty"},
		{"v1 (beta)", "", "devel"},
	} {
		got := productVersion(tc.version, tc.revision)
		if got != tc.want {
			t.Errorf("productVersion(%q, %q) = %q, want %q", tc.version, tc.revision, got, tc.want)
		}
		if ua := "tsbench/" + got; !userAgentGrammar.MatchString(ua) {
			t.Errorf("%q is not an RFC 9110 product", ua)
		}
	}
	if userAgentGrammar.MatchString("tsbench/(devel)") {
		t.Error("the grammar takes tsbench/(devel)")
	}
}
