// Command regex-oracle answers, for (pattern, text) cases read as JSON lines on stdin, what
// Sprig's regular-expression functions return in Go (Sprig v3.3.0 as Helm v3 links it, on
// the Go toolchain that builds it). One JSON line out per case, in order. Capstan's
// translation of Go's RE2 syntax is checked against these answers
// (plugins/lib/sprig/tests/regex_oracle.rs); `-names` prints instead the `\p{..}` class
// names Go's parser accepts, one per line.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"unicode"

	sprig "github.com/Masterminds/sprig/v3"
)

// A case: pattern, text, the count for regexFindAll/regexSplit, the replacement template.
type oracleCase struct {
	Pattern string `json:"p"`
	Text    string `json:"s"`
	N       int    `json:"n"`
	Repl    string `json:"r"`
}

// Go's answers. A pattern Go refuses has Err (the must* functions' error) and Panic (what
// the plain functions panic with, which a template reports); Match is then false.
type oracleAnswer struct {
	Err     string   `json:"err,omitempty"`
	Panic   string   `json:"panic,omitempty"`
	Match   bool     `json:"match"`
	Find    string   `json:"find"`
	FindAll []string `json:"all"`
	Replace string   `json:"repl"`
	Literal string   `json:"lit"`
	Split   []string `json:"split"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-names" {
		printNames()
		return
	}
	funcs := sprig.TxtFuncMap()
	match := funcs["regexMatch"].(func(string, string) bool)
	mustFind := funcs["mustRegexFind"].(func(string, string) (string, error))
	find := funcs["regexFind"].(func(string, string) string)
	findAll := funcs["regexFindAll"].(func(string, string, int) []string)
	replace := funcs["regexReplaceAll"].(func(string, string, string) string)
	literal := funcs["regexReplaceAllLiteral"].(func(string, string, string) string)
	split := funcs["regexSplit"].(func(string, string, int) []string)

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for line := 1; in.Scan(); line++ {
		var c oracleCase
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintf(os.Stderr, "regex-oracle: stdin line %d: %v\n", line, err)
			os.Exit(2)
		}
		var a oracleAnswer
		if _, err := mustFind(c.Pattern, c.Text); err != nil {
			a.Err = err.Error()
			a.Panic = panicOf(func() { find(c.Pattern, c.Text) })
		} else {
			a.Match = match(c.Pattern, c.Text)
			a.Find = find(c.Pattern, c.Text)
			a.FindAll = nonNil(findAll(c.Pattern, c.Text, c.N))
			a.Replace = replace(c.Pattern, c.Text, c.Repl)
			a.Literal = literal(c.Pattern, c.Text, c.Repl)
			a.Split = nonNil(split(c.Pattern, c.Text, c.N))
		}
		if err := enc.Encode(a); err != nil {
			fmt.Fprintf(os.Stderr, "regex-oracle: %v\n", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "regex-oracle: reading stdin: %v\n", err)
		os.Exit(2)
	}
}

// The message a plain (non-must) function panics with: regexp.MustCompile's.
func panicOf(call func()) (message string) {
	defer func() {
		if r := recover(); r != nil {
			message = fmt.Sprint(r)
		}
	}()
	call()
	return ""
}

// Lists print as [] in templates whether nil or empty; record them as [].
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// printNames lists the names \p{..} accepts as Go spells them in its tables (Categories,
// Scripts, CategoryAliases and the special names), each with what it stands for, tab
// separated: "category", "script", "alias <category>" or "special". Whether a spelling is
// accepted is then Go's canonical-name lookup, which the Rust side reimplements.
func printNames() {
	var lines []string
	for name := range unicode.Categories {
		lines = append(lines, name+"\tcategory")
	}
	for name := range unicode.Scripts {
		lines = append(lines, name+"\tscript")
	}
	for name, actual := range unicode.CategoryAliases {
		lines = append(lines, name+"\talias "+actual)
	}
	sort.Strings(lines)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	// Sanity: an accepted spelling compiles.
	if _, err := regexp.Compile(`\p{Greek}`); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
