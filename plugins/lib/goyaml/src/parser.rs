//! libyaml's event parser as go-yaml v2 carries it (`parserc.go`): tokens to events
//! (stream, document, mapping, sequence, scalar, alias), with tag-handle resolution,
//! `%YAML 1.1`/`%TAG` directives and the same error texts and marks.

use crate::scanner::{ErrorKind, Mark, Problem, ScalarStyle, Scanner, Token, TokenKind};

/// Event kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias {
        anchor: String,
    },
    Scalar {
        anchor: Option<String>,
        tag: String,
        value: String,
        plain_implicit: bool,
        quoted_implicit: bool,
        style: ScalarStyle,
    },
    SequenceStart {
        anchor: Option<String>,
        tag: String,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
        tag: String,
    },
    MappingEnd,
}

/// An event with its start mark.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: EventKind,
    pub start: Mark,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    BlockNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}

type PResult<T> = Result<T, Problem>;

/// The event parser.
pub struct Parser {
    scanner: Scanner,
    state: State,
    states: Vec<State>,
    marks: Vec<Mark>,
    tag_directives: Vec<(String, String)>,
}

fn parser_error(problem: &str, problem_mark: Mark) -> Problem {
    Problem {
        kind: ErrorKind::Parser,
        context: "",
        context_mark: Mark::default(),
        problem: problem.to_string(),
        problem_mark,
    }
}

fn parser_error_context(
    context: &'static str,
    context_mark: Mark,
    problem: &str,
    problem_mark: Mark,
) -> Problem {
    Problem {
        kind: ErrorKind::Parser,
        context,
        context_mark,
        problem: problem.to_string(),
        problem_mark,
    }
}

impl Parser {
    /// A parser over the text.
    pub fn new(text: &str) -> Parser {
        Parser {
            scanner: Scanner::new(text),
            state: State::StreamStart,
            states: Vec::new(),
            marks: Vec::new(),
            tag_directives: Vec::new(),
        }
    }

    fn peek_token(&mut self) -> PResult<&Token> {
        if !self.scanner.token_available {
            self.scanner.fetch_more_tokens()?;
        }
        match self.scanner.tokens.front() {
            Some(t) => Ok(t),
            None => Err(parser_error(
                "unexpected end of token stream",
                self.scanner.mark,
            )),
        }
    }

    fn peek(&mut self) -> PResult<Token> {
        self.peek_token().cloned()
    }

    fn skip_token(&mut self) {
        self.scanner.token_available = false;
        self.scanner.tokens_parsed += 1;
        if let Some(t) = self.scanner.tokens.pop_front() {
            self.scanner.stream_end_produced = t.kind == TokenKind::StreamEnd;
        }
    }

    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(State::End);
    }

    /// The next event; `None` after the stream end.
    pub fn next_event(&mut self) -> PResult<Option<Event>> {
        if self.scanner.stream_end_produced || self.state == State::End {
            return Ok(None);
        }
        self.state_machine().map(Some)
    }

    fn state_machine(&mut self) -> PResult<Event> {
        match self.state {
            State::StreamStart => self.parse_stream_start(),
            State::ImplicitDocumentStart => self.parse_document_start(true),
            State::DocumentStart => self.parse_document_start(false),
            State::DocumentContent => self.parse_document_content(),
            State::DocumentEnd => self.parse_document_end(),
            State::BlockNode => self.parse_node(true, false),
            State::BlockSequenceFirstEntry => self.parse_block_sequence_entry(true),
            State::BlockSequenceEntry => self.parse_block_sequence_entry(false),
            State::IndentlessSequenceEntry => self.parse_indentless_sequence_entry(),
            State::BlockMappingFirstKey => self.parse_block_mapping_key(true),
            State::BlockMappingKey => self.parse_block_mapping_key(false),
            State::BlockMappingValue => self.parse_block_mapping_value(),
            State::FlowSequenceFirstEntry => self.parse_flow_sequence_entry(true),
            State::FlowSequenceEntry => self.parse_flow_sequence_entry(false),
            State::FlowSequenceEntryMappingKey => self.parse_flow_sequence_entry_mapping_key(),
            State::FlowSequenceEntryMappingValue => self.parse_flow_sequence_entry_mapping_value(),
            State::FlowSequenceEntryMappingEnd => self.parse_flow_sequence_entry_mapping_end(),
            State::FlowMappingFirstKey => self.parse_flow_mapping_key(true),
            State::FlowMappingKey => self.parse_flow_mapping_key(false),
            State::FlowMappingValue => self.parse_flow_mapping_value(false),
            State::FlowMappingEmptyValue => self.parse_flow_mapping_value(true),
            State::End => Err(parser_error("parser ended", self.scanner.mark)),
        }
    }

    fn parse_stream_start(&mut self) -> PResult<Event> {
        let token = self.peek()?;
        if token.kind != TokenKind::StreamStart {
            return Err(parser_error(
                "did not find expected <stream-start>",
                token.start,
            ));
        }
        self.state = State::ImplicitDocumentStart;
        self.skip_token();
        Ok(Event {
            kind: EventKind::StreamStart,
            start: token.start,
        })
    }

    fn parse_document_start(&mut self, implicit: bool) -> PResult<Event> {
        let mut token = self.peek()?;
        if !implicit {
            while token.kind == TokenKind::DocumentEnd {
                self.skip_token();
                token = self.peek()?;
            }
        }
        let is_directive = matches!(
            token.kind,
            TokenKind::VersionDirective(..) | TokenKind::TagDirective { .. }
        );
        if implicit
            && !is_directive
            && token.kind != TokenKind::DocumentStart
            && token.kind != TokenKind::StreamEnd
        {
            self.process_directives()?;
            self.states.push(State::DocumentEnd);
            self.state = State::BlockNode;
            Ok(Event {
                kind: EventKind::DocumentStart,
                start: token.start,
            })
        } else if token.kind != TokenKind::StreamEnd {
            let start = token.start;
            self.process_directives()?;
            let token = self.peek()?;
            if token.kind != TokenKind::DocumentStart {
                return Err(parser_error(
                    "did not find expected <document start>",
                    token.start,
                ));
            }
            self.states.push(State::DocumentEnd);
            self.state = State::DocumentContent;
            self.skip_token();
            Ok(Event {
                kind: EventKind::DocumentStart,
                start,
            })
        } else {
            self.state = State::End;
            self.skip_token();
            Ok(Event {
                kind: EventKind::StreamEnd,
                start: token.start,
            })
        }
    }

    fn parse_document_content(&mut self) -> PResult<Event> {
        let token = self.peek()?;
        if matches!(
            token.kind,
            TokenKind::VersionDirective(..)
                | TokenKind::TagDirective { .. }
                | TokenKind::DocumentStart
                | TokenKind::DocumentEnd
                | TokenKind::StreamEnd
        ) {
            self.pop_state();
            return Ok(empty_scalar(token.start));
        }
        self.parse_node(true, false)
    }

    fn parse_document_end(&mut self) -> PResult<Event> {
        let token = self.peek()?;
        if token.kind == TokenKind::DocumentEnd {
            self.skip_token();
        }
        self.tag_directives.clear();
        self.state = State::DocumentStart;
        Ok(Event {
            kind: EventKind::DocumentEnd,
            start: token.start,
        })
    }

    fn parse_node(&mut self, block: bool, indentless_sequence: bool) -> PResult<Event> {
        let mut token = self.peek()?;
        if let TokenKind::Alias(name) = &token.kind {
            self.pop_state();
            self.skip_token();
            return Ok(Event {
                kind: EventKind::Alias {
                    anchor: name.clone(),
                },
                start: token.start,
            });
        }
        let mut start = token.start;
        let mut anchor: Option<String> = None;
        let mut tag_parts: Option<(String, String)> = None;
        let mut tag_mark = Mark::default();
        if let TokenKind::Anchor(a) = &token.kind {
            anchor = Some(a.clone());
            start = token.start;
            self.skip_token();
            token = self.peek()?;
            if let TokenKind::Tag { handle, suffix } = &token.kind {
                tag_parts = Some((handle.clone(), suffix.clone()));
                tag_mark = token.start;
                self.skip_token();
                token = self.peek()?;
            }
        } else if let TokenKind::Tag { handle, suffix } = &token.kind {
            tag_parts = Some((handle.clone(), suffix.clone()));
            start = token.start;
            tag_mark = token.start;
            self.skip_token();
            token = self.peek()?;
            if let TokenKind::Anchor(a) = &token.kind {
                anchor = Some(a.clone());
                self.skip_token();
                token = self.peek()?;
            }
        }
        let mut tag = String::new();
        if let Some((handle, suffix)) = tag_parts {
            if handle.is_empty() {
                tag = suffix;
            } else {
                let found = self
                    .tag_directives
                    .iter()
                    .find(|(h, _)| *h == handle)
                    .map(|(_, p)| format!("{p}{suffix}"));
                match found {
                    Some(t) if !t.is_empty() => tag = t,
                    _ => {
                        return Err(parser_error_context(
                            "while parsing a node",
                            start,
                            "found undefined tag handle",
                            tag_mark,
                        ));
                    }
                }
            }
        }
        if indentless_sequence && token.kind == TokenKind::BlockEntry {
            self.state = State::IndentlessSequenceEntry;
            return Ok(Event {
                kind: EventKind::SequenceStart { anchor, tag },
                start,
            });
        }
        if let TokenKind::Scalar { value, style } = &token.kind {
            let mut plain_implicit = false;
            let mut quoted_implicit = false;
            if (tag.is_empty() && *style == ScalarStyle::Plain) || tag == "!" {
                plain_implicit = true;
            } else if tag.is_empty() {
                quoted_implicit = true;
            }
            self.pop_state();
            let ev = Event {
                kind: EventKind::Scalar {
                    anchor,
                    tag,
                    value: value.clone(),
                    plain_implicit,
                    quoted_implicit,
                    style: *style,
                },
                start,
            };
            self.skip_token();
            return Ok(ev);
        }
        match token.kind {
            TokenKind::FlowSequenceStart => {
                self.state = State::FlowSequenceFirstEntry;
                return Ok(Event {
                    kind: EventKind::SequenceStart { anchor, tag },
                    start,
                });
            }
            TokenKind::FlowMappingStart => {
                self.state = State::FlowMappingFirstKey;
                return Ok(Event {
                    kind: EventKind::MappingStart { anchor, tag },
                    start,
                });
            }
            TokenKind::BlockSequenceStart if block => {
                self.state = State::BlockSequenceFirstEntry;
                return Ok(Event {
                    kind: EventKind::SequenceStart { anchor, tag },
                    start,
                });
            }
            TokenKind::BlockMappingStart if block => {
                self.state = State::BlockMappingFirstKey;
                return Ok(Event {
                    kind: EventKind::MappingStart { anchor, tag },
                    start,
                });
            }
            _ => {}
        }
        if anchor.is_some() || !tag.is_empty() {
            self.pop_state();
            let implicit = tag.is_empty();
            return Ok(Event {
                kind: EventKind::Scalar {
                    anchor,
                    tag,
                    value: String::new(),
                    plain_implicit: implicit,
                    quoted_implicit: false,
                    style: ScalarStyle::Plain,
                },
                start,
            });
        }
        let context = if block {
            "while parsing a block node"
        } else {
            "while parsing a flow node"
        };
        Err(parser_error_context(
            context,
            start,
            "did not find expected node content",
            token.start,
        ))
    }

    fn first_mark(&mut self) -> PResult<()> {
        let token = self.peek()?;
        self.marks.push(token.start);
        self.skip_token();
        Ok(())
    }

    fn pop_mark(&mut self) -> Mark {
        self.marks.pop().unwrap_or_default()
    }

    fn parse_block_sequence_entry(&mut self, first: bool) -> PResult<Event> {
        if first {
            self.first_mark()?;
        }
        let token = self.peek()?;
        if token.kind == TokenKind::BlockEntry {
            let mark = token.end;
            self.skip_token();
            let token = self.peek()?;
            if token.kind != TokenKind::BlockEntry && token.kind != TokenKind::BlockEnd {
                self.states.push(State::BlockSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::BlockSequenceEntry;
            return Ok(empty_scalar(mark));
        }
        if token.kind == TokenKind::BlockEnd {
            self.pop_state();
            self.pop_mark();
            self.skip_token();
            return Ok(Event {
                kind: EventKind::SequenceEnd,
                start: token.start,
            });
        }
        let context_mark = self.pop_mark();
        Err(parser_error_context(
            "while parsing a block collection",
            context_mark,
            "did not find expected '-' indicator",
            token.start,
        ))
    }

    fn parse_indentless_sequence_entry(&mut self) -> PResult<Event> {
        let token = self.peek()?;
        if token.kind == TokenKind::BlockEntry {
            let mark = token.end;
            self.skip_token();
            let token = self.peek()?;
            if !matches!(
                token.kind,
                TokenKind::BlockEntry | TokenKind::Key | TokenKind::Value | TokenKind::BlockEnd
            ) {
                self.states.push(State::IndentlessSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::IndentlessSequenceEntry;
            return Ok(empty_scalar(mark));
        }
        self.pop_state();
        Ok(Event {
            kind: EventKind::SequenceEnd,
            start: token.start,
        })
    }

    fn parse_block_mapping_key(&mut self, first: bool) -> PResult<Event> {
        if first {
            self.first_mark()?;
        }
        let token = self.peek()?;
        if token.kind == TokenKind::Key {
            let mark = token.end;
            self.skip_token();
            let token = self.peek()?;
            if !matches!(
                token.kind,
                TokenKind::Key | TokenKind::Value | TokenKind::BlockEnd
            ) {
                self.states.push(State::BlockMappingValue);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingValue;
            return Ok(empty_scalar(mark));
        }
        if token.kind == TokenKind::BlockEnd {
            self.pop_state();
            self.pop_mark();
            self.skip_token();
            return Ok(Event {
                kind: EventKind::MappingEnd,
                start: token.start,
            });
        }
        let context_mark = self.pop_mark();
        Err(parser_error_context(
            "while parsing a block mapping",
            context_mark,
            "did not find expected key",
            token.start,
        ))
    }

    fn parse_block_mapping_value(&mut self) -> PResult<Event> {
        let token = self.peek()?;
        if token.kind == TokenKind::Value {
            let mark = token.end;
            self.skip_token();
            let token = self.peek()?;
            if !matches!(
                token.kind,
                TokenKind::Key | TokenKind::Value | TokenKind::BlockEnd
            ) {
                self.states.push(State::BlockMappingKey);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingKey;
            return Ok(empty_scalar(mark));
        }
        self.state = State::BlockMappingKey;
        Ok(empty_scalar(token.start))
    }

    fn parse_flow_sequence_entry(&mut self, first: bool) -> PResult<Event> {
        if first {
            self.first_mark()?;
        }
        let mut token = self.peek()?;
        if token.kind != TokenKind::FlowSequenceEnd {
            if !first {
                if token.kind == TokenKind::FlowEntry {
                    self.skip_token();
                    token = self.peek()?;
                } else {
                    let context_mark = self.pop_mark();
                    return Err(parser_error_context(
                        "while parsing a flow sequence",
                        context_mark,
                        "did not find expected ',' or ']'",
                        token.start,
                    ));
                }
            }
            if token.kind == TokenKind::Key {
                self.state = State::FlowSequenceEntryMappingKey;
                self.skip_token();
                return Ok(Event {
                    kind: EventKind::MappingStart {
                        anchor: None,
                        tag: String::new(),
                    },
                    start: token.start,
                });
            } else if token.kind != TokenKind::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntry);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.pop_mark();
        self.skip_token();
        Ok(Event {
            kind: EventKind::SequenceEnd,
            start: token.start,
        })
    }

    fn parse_flow_sequence_entry_mapping_key(&mut self) -> PResult<Event> {
        let token = self.peek()?;
        if !matches!(
            token.kind,
            TokenKind::Value | TokenKind::FlowEntry | TokenKind::FlowSequenceEnd
        ) {
            self.states.push(State::FlowSequenceEntryMappingValue);
            return self.parse_node(false, false);
        }
        let mark = token.end;
        self.skip_token();
        self.state = State::FlowSequenceEntryMappingValue;
        Ok(empty_scalar(mark))
    }

    fn parse_flow_sequence_entry_mapping_value(&mut self) -> PResult<Event> {
        let mut token = self.peek()?;
        if token.kind == TokenKind::Value {
            self.skip_token();
            token = self.peek()?;
            if token.kind != TokenKind::FlowEntry && token.kind != TokenKind::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntryMappingEnd);
                return self.parse_node(false, false);
            }
        }
        self.state = State::FlowSequenceEntryMappingEnd;
        Ok(empty_scalar(token.start))
    }

    fn parse_flow_sequence_entry_mapping_end(&mut self) -> PResult<Event> {
        let token = self.peek()?;
        self.state = State::FlowSequenceEntry;
        Ok(Event {
            kind: EventKind::MappingEnd,
            start: token.start,
        })
    }

    fn parse_flow_mapping_key(&mut self, first: bool) -> PResult<Event> {
        if first {
            self.first_mark()?;
        }
        let mut token = self.peek()?;
        if token.kind != TokenKind::FlowMappingEnd {
            if !first {
                if token.kind == TokenKind::FlowEntry {
                    self.skip_token();
                    token = self.peek()?;
                } else {
                    let context_mark = self.pop_mark();
                    return Err(parser_error_context(
                        "while parsing a flow mapping",
                        context_mark,
                        "did not find expected ',' or '}'",
                        token.start,
                    ));
                }
            }
            if token.kind == TokenKind::Key {
                self.skip_token();
                token = self.peek()?;
                if !matches!(
                    token.kind,
                    TokenKind::Value | TokenKind::FlowEntry | TokenKind::FlowMappingEnd
                ) {
                    self.states.push(State::FlowMappingValue);
                    return self.parse_node(false, false);
                }
                self.state = State::FlowMappingValue;
                return Ok(empty_scalar(token.start));
            } else if token.kind != TokenKind::FlowMappingEnd {
                self.states.push(State::FlowMappingEmptyValue);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.pop_mark();
        self.skip_token();
        Ok(Event {
            kind: EventKind::MappingEnd,
            start: token.start,
        })
    }

    fn parse_flow_mapping_value(&mut self, empty: bool) -> PResult<Event> {
        let mut token = self.peek()?;
        if empty {
            self.state = State::FlowMappingKey;
            return Ok(empty_scalar(token.start));
        }
        if token.kind == TokenKind::Value {
            self.skip_token();
            token = self.peek()?;
            if token.kind != TokenKind::FlowEntry && token.kind != TokenKind::FlowMappingEnd {
                self.states.push(State::FlowMappingKey);
                return self.parse_node(false, false);
            }
        }
        self.state = State::FlowMappingKey;
        Ok(empty_scalar(token.start))
    }

    fn process_directives(&mut self) -> PResult<()> {
        let mut has_version = false;
        let mut token = self.peek()?;
        loop {
            match &token.kind {
                TokenKind::VersionDirective(major, minor) => {
                    if has_version {
                        return Err(parser_error("found duplicate %YAML directive", token.start));
                    }
                    if *major != 1 || *minor != 1 {
                        return Err(parser_error(
                            "found incompatible YAML document",
                            token.start,
                        ));
                    }
                    has_version = true;
                }
                TokenKind::TagDirective { handle, prefix } => {
                    if self.tag_directives.iter().any(|(h, _)| h == handle) {
                        return Err(parser_error("found duplicate %TAG directive", token.start));
                    }
                    self.tag_directives.push((handle.clone(), prefix.clone()));
                }
                _ => break,
            }
            self.skip_token();
            token = self.peek()?;
        }
        for (h, p) in [("!", "!"), ("!!", "tag:yaml.org,2002:")] {
            if !self.tag_directives.iter().any(|(x, _)| x == h) {
                self.tag_directives.push((h.to_string(), p.to_string()));
            }
        }
        Ok(())
    }
}

fn empty_scalar(mark: Mark) -> Event {
    Event {
        kind: EventKind::Scalar {
            anchor: None,
            tag: String::new(),
            value: String::new(),
            plain_implicit: true,
            quoted_implicit: false,
            style: ScalarStyle::Plain,
        },
        start: mark,
    }
}
