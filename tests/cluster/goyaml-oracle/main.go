// Command goyaml-oracle records what real Go gives for YAML documents, as capstan-goyaml's
// differential test (plugins/lib/goyaml/tests/oracle.rs) reads it: one JSON object per
// line, in the order of the input, with
//
//	parse        json.Marshal of sigs.k8s.io/yaml.Unmarshal into interface{} ("" on error)
//	parse_err    that Unmarshal's error
//	typed_err    go-yaml v2's own yaml.Unmarshal error (into interface{})
//	to_yaml      sigs.k8s.io/yaml.Marshal of the parsed value (Helm's toYaml, newline kept)
//	to_yaml_err  its error
//	pretty       go-yaml v3's Encoder with SetIndent(2) (Helm's toYamlPretty, newline kept)
//	toml         BurntSushi/toml's Encoder (Helm's toToml)
//	toml_err     its error, or "PANIC <value>" when the encoder panicked (it does for nil)
//	input        the document
//
// (the fields after parse_err are empty when parsing failed), written as Python's
// json.dumps writes it (", " and ": " separators, non-ASCII as \uXXXX), the form the
// fixture was first recorded in.
//
// The documents are the "input" fields of the JSON lines read from the file named by the
// first argument (the committed fixture itself; a new case is a line {"input": "..."}).
// Each document is evaluated several times: Go's output can depend on random map
// iteration (go-yaml's key order is not transitive for some mixes of digits and letters),
// and such a document is left out, with a note on stderr.
//
//	go run . ../../../plugins/lib/goyaml/tests/fixtures/go-yaml-oracle.jsonl > new.jsonl
//
// `make goyaml-oracle` does this and replaces the fixture.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
	goYaml "sigs.k8s.io/yaml/goyaml.v3"
)

// runs is how many times each document is evaluated to tell stable output from output that
// depends on map iteration order.
const runs = 8

// record is one fixture line, in the order of its fields.
type record struct {
	Parse, ParseErr, TypedErr, ToYAML, ToYAMLErr, Pretty, TOML, TOMLErr, Input string
}

func (r record) fields() [][2]string {
	return [][2]string{
		{"parse", r.Parse}, {"parse_err", r.ParseErr}, {"typed_err", r.TypedErr},
		{"to_yaml", r.ToYAML}, {"to_yaml_err", r.ToYAMLErr}, {"pretty", r.Pretty},
		{"toml", r.TOML}, {"toml_err", r.TOMLErr}, {"input", r.Input},
	}
}

// evaluate runs every Go function of the record on one document.
func evaluate(input string) record {
	r := record{Input: input}
	var typed interface{}
	if err := yamlv2.Unmarshal([]byte(input), &typed); err != nil {
		r.TypedErr = err.Error()
	}
	var v interface{}
	if err := yaml.Unmarshal([]byte(input), &v); err != nil {
		r.ParseErr = err.Error()
		return r
	}
	if j, err := json.Marshal(v); err != nil {
		r.Parse = "ERR"
	} else {
		r.Parse = string(j)
	}
	if y, err := yaml.Marshal(v); err != nil {
		r.ToYAMLErr = err.Error()
	} else {
		r.ToYAML = string(y)
	}
	r.Pretty = pretty(v)
	r.TOML, r.TOMLErr = toTOML(v)
	return r
}

// pretty is Helm's toYamlPretty before it trims the final newline.
func pretty(v interface{}) (out string) {
	defer func() {
		if p := recover(); p != nil {
			out = fmt.Sprintf("PANIC %v", p)
		}
	}()
	var b bytes.Buffer
	encoder := goYaml.NewEncoder(&b)
	encoder.SetIndent(2)
	if err := encoder.Encode(v); err != nil {
		return "ERR " + err.Error()
	}
	return b.String()
}

// toTOML is Helm's toToml, with its error apart and a panic recorded as "PANIC <value>".
func toTOML(v interface{}) (out, failure string) {
	defer func() {
		if p := recover(); p != nil {
			out, failure = "", fmt.Sprintf("PANIC %v", p)
		}
	}()
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(v); err != nil {
		return "", err.Error()
	}
	return b.String(), ""
}

// pyString writes s as Python's json.dumps does with ensure_ascii: `"` and `\` escaped,
// \n \r \t \b \f by name, every other character outside space..tilde as \uXXXX (lowercase
// hex, UTF-16 surrogate pairs beyond the BMP). Invalid UTF-8 becomes U+FFFD.
func pyString(w *bytes.Buffer, s string) {
	w.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"':
			w.WriteString(`\"`)
		case c == '\\':
			w.WriteString(`\\`)
		case c == '\n':
			w.WriteString(`\n`)
		case c == '\r':
			w.WriteString(`\r`)
		case c == '\t':
			w.WriteString(`\t`)
		case c == '\b':
			w.WriteString(`\b`)
		case c == '\f':
			w.WriteString(`\f`)
		case c >= ' ' && c <= '~':
			w.WriteRune(c)
		case c > 0xFFFF:
			c -= 0x10000
			fmt.Fprintf(w, `\u%04x\u%04x`, 0xD800+(c>>10), 0xDC00+(c&0x3FF))
		default:
			fmt.Fprintf(w, `\u%04x`, c)
		}
	}
	w.WriteByte('"')
}

func (r record) line() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range r.fields() {
		if i > 0 {
			b.WriteString(", ")
		}
		pyString(&b, f[0])
		b.WriteString(": ")
		pyString(&b, f[1])
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// inputs reads the "input" field of every JSON line of r.
func inputs(r io.Reader) ([]string, error) {
	var out []string
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; scanner.Scan(); n++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		var fields struct {
			Input *string `json:"input"`
		}
		if err := json.Unmarshal([]byte(text), &fields); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if fields.Input == nil {
			return nil, fmt.Errorf("line %d: no \"input\" field", n)
		}
		if !utf8.ValidString(*fields.Input) {
			return nil, fmt.Errorf("line %d: input is not UTF-8", n)
		}
		out = append(out, *fields.Input)
	}
	return out, scanner.Err()
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goyaml-oracle FIXTURE.jsonl > NEW.jsonl")
		os.Exit(2)
	}
	file, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	docs, err := inputs(file)
	file.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	kept, unstable := 0, 0
	for _, doc := range docs {
		first := evaluate(doc)
		stable := true
		for i := 1; i < runs && stable; i++ {
			stable = evaluate(doc) == first
		}
		if !stable {
			unstable++
			fmt.Fprintf(os.Stderr, "left out (Go's output varies between runs): %q\n", doc)
			continue
		}
		kept++
		if _, err := out.Write(first.line()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "goyaml-oracle: %d documents recorded, %d left out\n", kept, unstable)
}
