//! go-yaml v2's node builder (the `parser` half of `decode.go`): events to a node tree per
//! document, with anchors registered as they start (so a self-reference is detectable) and
//! aliases resolved to their anchored node.

use foldhash::{HashMap, HashMapExt};

use crate::parser::{Event, EventKind, Parser};

/// Collections nested deeper than this are refused: decoding and printing recurse, and the
/// native stack (1 MiB on wasm) must hold them. go-yaml's own scanner limit is 10000.
pub const MAX_NESTING: usize = 512;

/// One node of a document.
#[derive(Debug, Clone)]
pub enum NodeKind {
    Scalar {
        value: String,
        tag: String,
        implicit: bool,
    },
    Mapping(Vec<usize>),
    Sequence(Vec<usize>),
    Alias {
        name: String,
        target: usize,
    },
}

/// A node with the 0-based line it starts on.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    pub line: usize,
}

/// A parsed document: its nodes (an arena) and the root.
#[derive(Debug, Default)]
pub struct Document {
    pub nodes: Vec<Node>,
    pub root: Option<usize>,
}

/// Builds documents from the event stream, one at a time.
pub struct Composer {
    parser: Parser,
    pending: Option<Event>,
    started: bool,
}

impl Composer {
    /// A composer over the text.
    pub fn new(text: &str) -> Composer {
        // go-yaml parses an empty input as a single line break.
        let text = if text.is_empty() { "\n" } else { text };
        Composer {
            parser: Parser::new(text),
            pending: None,
            started: false,
        }
    }

    fn peek(&mut self) -> Result<&Event, String> {
        if self.pending.is_none() {
            match self.parser.next_event() {
                Ok(Some(e)) => self.pending = Some(e),
                Ok(None) => {
                    return Err("attempted to go past the end of stream; corrupted value?".into());
                }
                Err(p) => return Err(p.message()),
            }
        }
        match &self.pending {
            Some(e) => Ok(e),
            None => Err("unknown problem parsing YAML content".into()),
        }
    }

    fn take(&mut self) -> Result<Event, String> {
        self.peek()?;
        self.pending
            .take()
            .ok_or_else(|| "unknown problem parsing YAML content".to_string())
    }

    /// The next document, or `None` at the end of the stream. Errors are go-yaml's texts
    /// without the `yaml: ` prefix.
    pub fn next_document(&mut self) -> Result<Option<Document>, String> {
        if !self.started {
            let e = self.take()?;
            if e.kind != EventKind::StreamStart {
                return Err(format!("expected STREAM-START event but got {:?}", e.kind));
            }
            self.started = true;
        }
        if matches!(self.peek()?.kind, EventKind::StreamEnd) {
            return Ok(None);
        }
        let start = self.take()?;
        if start.kind != EventKind::DocumentStart {
            return Err(format!(
                "expected DOCUMENT-START event but got {:?}",
                start.kind
            ));
        }
        let mut doc = Document::default();
        let mut anchors: HashMap<String, usize> = HashMap::new();
        let root = self.node(&mut doc, &mut anchors, 0)?;
        doc.root = Some(root);
        let end = self.take()?;
        if end.kind != EventKind::DocumentEnd {
            return Err(format!(
                "expected DOCUMENT-END event but got {:?}",
                end.kind
            ));
        }
        Ok(Some(doc))
    }

    /// Builds one node (and everything under it) without recursion.
    fn node(
        &mut self,
        doc: &mut Document,
        anchors: &mut HashMap<String, usize>,
        _depth: usize,
    ) -> Result<usize, String> {
        // Open collections: node id and the children read so far.
        let mut open: Vec<(usize, Vec<usize>)> = Vec::new();
        loop {
            if !open.is_empty()
                && matches!(
                    self.peek()?.kind,
                    EventKind::SequenceEnd | EventKind::MappingEnd
                )
            {
                let end = self.take()?;
                let Some((id, children)) = open.pop() else {
                    return Err("unbalanced collection end".into());
                };
                doc.nodes[id].kind = if end.kind == EventKind::MappingEnd {
                    NodeKind::Mapping(children)
                } else {
                    NodeKind::Sequence(children)
                };
                match open.last_mut() {
                    Some((_, siblings)) => siblings.push(id),
                    None => return Ok(id),
                }
                continue;
            }
            let event = self.take()?;
            let line = event.start.line;
            let (id, anchor, opens) = match event.kind {
                EventKind::Scalar {
                    anchor,
                    tag,
                    value,
                    plain_implicit,
                    ..
                } => {
                    let kind = NodeKind::Scalar {
                        value,
                        tag,
                        implicit: plain_implicit,
                    };
                    (push(doc, kind, line), anchor, false)
                }
                EventKind::Alias { anchor } => match anchors.get(&anchor) {
                    Some(&target) => {
                        let kind = NodeKind::Alias {
                            name: anchor,
                            target,
                        };
                        (push(doc, kind, line), None, false)
                    }
                    None => return Err(format!("unknown anchor '{anchor}' referenced")),
                },
                EventKind::SequenceStart { anchor, .. } => (
                    push(doc, NodeKind::Sequence(Vec::new()), line),
                    anchor,
                    true,
                ),
                EventKind::MappingStart { anchor, .. } => {
                    (push(doc, NodeKind::Mapping(Vec::new()), line), anchor, true)
                }
                other => return Err(format!("attempted to parse unknown event: {other:?}")),
            };
            if let Some(a) = anchor {
                anchors.insert(a, id);
            }
            if opens {
                if open.len() >= MAX_NESTING {
                    return Err(format!("exceeded max depth of {MAX_NESTING}"));
                }
                open.push((id, Vec::new()));
                continue;
            }
            match open.last_mut() {
                Some((_, siblings)) => siblings.push(id),
                None => return Ok(id),
            }
        }
    }
}

fn push(doc: &mut Document, kind: NodeKind, line: usize) -> usize {
    doc.nodes.push(Node { kind, line });
    doc.nodes.len() - 1
}
