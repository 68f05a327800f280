package parser

import (
	"fmt"
	"strings"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/ast"
)

// tokKind is the kind of a token.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tFloat
	tString
	tPunct   // one of { } < > ( ) [ ] ; , = - ::
	tInclude // #include
)

// token is one lexical token. lead holds the comments written before it on lines of their own
// (since the previous token's line); trail the comments after it on its line.
type token struct {
	kind tokKind
	text string // identifier, punctuation, number as written, string contents
	pos  ast.Pos
	lead []string
}

// lexer splits a .tars file into tokens.
type lexer struct {
	file      string
	src       string
	off       int
	line, col int
	// trail maps a token index to the comments that follow it on its line.
	toks  []token
	trail map[int][]string
}

func lex(file, src string) ([]token, map[int][]string, error) {
	src = strings.TrimPrefix(src, "\ufeff") // a byte order mark (files saved by Windows editors)
	if strings.IndexByte(src, '\r') >= 0 {
		// Lines end in \r\n (Windows) or \r alone (classic Mac OS): a // comment ends at either,
		// and lines count alike.
		src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	}
	l := &lexer{file: file, src: src, line: 1, col: 1, trail: map[int][]string{}}
	var pending []string
	lastLine := 0
	for {
		l.skipSpace()
		if l.off >= len(l.src) {
			l.toks = append(l.toks, token{kind: tEOF, pos: l.pos(), lead: pending})
			return l.toks, l.trail, nil
		}
		if strings.HasPrefix(l.src[l.off:], "//") || strings.HasPrefix(l.src[l.off:], "/*") {
			line := l.line
			c, err := l.comment()
			if err != nil {
				return nil, nil, err
			}
			if line == lastLine && len(l.toks) > 0 && len(pending) == 0 {
				i := len(l.toks) - 1
				l.trail[i] = append(l.trail[i], c...)
			} else {
				pending = append(pending, c...)
			}
			continue
		}
		t, err := l.next()
		if err != nil {
			return nil, nil, err
		}
		t.lead, pending = pending, nil
		l.toks = append(l.toks, t)
		lastLine = l.line
	}
}

func (l *lexer) pos() ast.Pos { return ast.Pos{File: l.file, Line: l.line, Col: l.col} }

func (l *lexer) errorf(p ast.Pos, format string, args ...any) error {
	return fmt.Errorf("%s: %s", p, fmt.Sprintf(format, args...))
}

// advance consumes n bytes, counting lines and columns.
func (l *lexer) advance(n int) {
	for _, c := range l.src[l.off : l.off+n] {
		if c == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
	}
	l.off += n
}

func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		switch l.src[l.off] {
		case ' ', '\t', '\r', '\n', '\f', '\v':
			l.advance(1)
		default:
			return
		}
	}
}

// comment consumes a comment and returns its text as lines, without the comment markers and
// the leading '*' of block comment lines.
func (l *lexer) comment() ([]string, error) {
	p := l.pos()
	if strings.HasPrefix(l.src[l.off:], "//") {
		end := strings.IndexByte(l.src[l.off:], '\n')
		if end < 0 {
			end = len(l.src) - l.off
		}
		text := l.src[l.off+2 : l.off+end]
		l.advance(end)
		return cleanLines([]string{text}), nil
	}
	end := strings.Index(l.src[l.off+2:], "*/")
	if end < 0 {
		return nil, l.errorf(p, "unterminated comment")
	}
	text := l.src[l.off+2 : l.off+2+end]
	l.advance(end + 4)
	var lines []string
	for ln := range strings.SplitSeq(text, "\n") {
		ln = strings.TrimSpace(ln)
		ln = strings.TrimLeft(ln, "*")
		lines = append(lines, ln)
	}
	return cleanLines(lines), nil
}

// cleanLines trims the lines, makes them safe to copy into Go comments (commentText) and drops
// leading and trailing empty ones.
func cleanLines(lines []string) []string {
	var out []string
	for _, ln := range lines {
		out = append(out, commentText(strings.TrimRight(strings.TrimPrefix(strings.TrimRight(ln, " \t\r"), " "), " \t")))
	}
	for len(out) > 0 && strings.TrimSpace(out[0]) == "" {
		out = out[1:]
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out
}

// commentText returns s fit for a Go comment: a .tars file may be in another encoding than UTF-8
// (comments in GBK are common in TARS code bases) or hold what Go source may not (NUL, a byte
// order mark); each such byte or character becomes U+FFFD, so that the generated file is Go and
// the rest of the comment survives.
func commentText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == 0 || r == '\uFEFF' {
			return '\uFFFD'
		}
		return r
	}, s)
}

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

func (l *lexer) next() (token, error) {
	p := l.pos()
	s := l.src[l.off:]
	c := s[0]
	switch {
	case isLetter(c):
		n := 1
		for n < len(s) && (isLetter(s[n]) || isDigit(s[n])) {
			n++
		}
		l.advance(n)
		return token{kind: tIdent, text: s[:n], pos: p}, nil
	case isDigit(c) || c == '.' && len(s) > 1 && isDigit(s[1]):
		n, float := 0, false
		if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
			n = 2
			for n < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[n]) >= 0 {
				n++
			}
		} else {
			for n < len(s) && (isDigit(s[n]) || s[n] == '.' || s[n] == 'e' || s[n] == 'E' ||
				(s[n] == '-' || s[n] == '+') && (s[n-1] == 'e' || s[n-1] == 'E')) {
				if !isDigit(s[n]) {
					float = true
				}
				n++
			}
			// C-style suffixes of float literals (1.5f).
			if n < len(s) && (s[n] == 'f' || s[n] == 'F') {
				float = true
				l.advance(n + 1)
				return token{kind: tFloat, text: s[:n], pos: p}, nil
			}
		}
		if n < len(s) && (isLetter(s[n])) {
			return token{}, l.errorf(p, "malformed number %q", s[:n+1])
		}
		l.advance(n)
		if float {
			return token{kind: tFloat, text: s[:n], pos: p}, nil
		}
		return token{kind: tInt, text: s[:n], pos: p}, nil
	case c == '"':
		// A string's escapes are C's, as tars2cpp's C++ and tars2go's Go (which copy the literal)
		// read them: \n, \t, \", \\, \x41, \101, ... An unknown escape is kept as written.
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '"':
				l.advance(i + 1)
				return token{kind: tString, text: b.String(), pos: p}, nil
			case '\n':
				return token{}, l.errorf(p, "newline in string")
			case '\\':
				if r, n := cEscape(s[i+1:]); n > 0 {
					b.WriteByte(r)
					i += n
					continue
				}
			}
			b.WriteByte(s[i])
		}
		return token{}, l.errorf(p, "unterminated string")
	case c == '#':
		if strings.HasPrefix(s, "#include") {
			l.advance(len("#include"))
			return token{kind: tInclude, text: "#include", pos: p}, nil
		}
		return token{}, l.errorf(p, "unknown directive (only #include is supported)")
	case c == ':':
		if strings.HasPrefix(s, "::") {
			l.advance(2)
			return token{kind: tPunct, text: "::", pos: p}, nil
		}
	case strings.IndexByte("{}<>()[];,=-+", c) >= 0:
		l.advance(1)
		return token{kind: tPunct, text: s[:1], pos: p}, nil
	}
	return token{}, l.errorf(p, "unexpected character %q", c)
}

// cEscape decodes the C escape sequence after a backslash at the start of s: the byte it
// stands for and how many bytes of s it took (0: not an escape C knows, kept as written).
func cEscape(s string) (byte, int) {
	if s == "" {
		return 0, 0
	}
	if r, ok := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'a': '\a', 'b': '\b', 'f': '\f', 'v': '\v',
		'\\': '\\', '"': '"', '\'': '\'', '?': '?'}[s[0]]; ok {
		return r, 1
	}
	if s[0] == 'x' {
		v, n := 0, 1
		for ; n < len(s) && n <= 2 && isHex(s[n]); n++ {
			v = v*16 + hexVal(s[n])
		}
		if n == 1 {
			return 0, 0
		}
		return byte(v), n
	}
	if s[0] >= '0' && s[0] <= '7' {
		v, n := 0, 0
		for ; n < len(s) && n < 3 && s[n] >= '0' && s[n] <= '7'; n++ {
			v = v*8 + int(s[n]-'0')
		}
		return byte(v), n
	}
	return 0, 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}
