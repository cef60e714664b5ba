//! Gitignore-style path patterns → regex. This is the one place that
//! defines how a [`PathPattern`] is matched by the compiled engine.
//!
//! # The matching form
//!
//! A path is matched as the relative path `rel` (normalised: segments
//! separated by single `/`, no `.` or `..`, no leading or trailing `/`)
//! followed by one terminating `/`. A rule matches when its regex matches a
//! *prefix* of `rel/` that starts at offset 0 (anchored rules) or at the
//! start of any segment (any-depth rules). Every segment of `rel/` ends with
//! `/`, so the pattern's own segments end with `/` and whatever follows a
//! match is free: a pattern that matches a directory covers everything in
//! it without a trailing `.*` that would stay alive in the automaton.
//!
//! The same reasoning drops a trailing `*` of the last segment (`foo*` is the
//! prefix `foo` of some segment: the rest of the segment and its `/` always
//! follow) and turns a final `**` (one or more segments) into "one more
//! byte".

use super::lower::{Lowered, Place, push_class, push_literal};
use crate::rule::{PathPattern, SegPiece, Segment};

/// `[^/]*`: a run of bytes inside one segment. Byte-level is exact here:
/// literals and `/` are whole characters, so a run between them is a run of
/// whole characters.
const SEG_RUN: &str = "(?-u:[^/])*";
/// `(?:[^/]*/)*`: zero or more whole segments.
const SEGS: &str = "(?:(?-u:[^/])*/)*";

/// Lowers a path pattern to its matching form (see the module docs).
pub(crate) fn lower_path(p: &PathPattern) -> Lowered {
    let mut segs: &[Segment] = &p.segments;
    let mut anchored = p.anchored;
    // `**/x` at the start is the any-depth `x`.
    while segs.len() > 1 && segs.first() == Some(&Segment::DoubleStar) {
        segs = &segs[1..];
        anchored = false;
    }
    if segs.is_empty() {
        return Lowered::Never;
    }
    let mut re = String::new();
    let mut latch = false;
    let mut inner_double = 0usize;
    let last = segs.len() - 1;
    for (i, seg) in segs.iter().enumerate() {
        match seg {
            Segment::DoubleStar if i == last => {
                // One or more further segments: after the preceding `/`
                // (or at the start) at least one more byte is there.
                re.push_str("(?s-u:.)");
            }
            Segment::DoubleStar => {
                inner_double += 1;
                re.push_str(SEGS);
            }
            Segment::Pieces(pieces) => {
                let mut pieces: &[SegPiece] = pieces;
                let trailing_star = i == last && pieces.last() == Some(&SegPiece::Star);
                if i == last {
                    while pieces.last() == Some(&SegPiece::Star) {
                        pieces = &pieces[..pieces.len() - 1];
                    }
                }
                // `*a*b` inside one segment keeps a thread alive once `a`
                // was seen: the automaton must remember it.
                if pieces.iter().filter(|x| **x == SegPiece::Star).count() >= 2 {
                    latch = true;
                }
                if trailing_star && pieces.is_empty() {
                    // A last segment of only `*`: some segment is there,
                    // so at least one byte before the terminating `/`.
                    re.push_str("(?s-u:.)");
                }
                for piece in pieces {
                    push_seg_piece(&mut re, piece);
                }
                if !trailing_star {
                    re.push('/');
                }
            }
        }
    }
    if inner_double >= 2 {
        latch = true;
    }
    let multi_segment =
        segs.len() > 1 && !(segs.len() == 2 && segs.last() == Some(&Segment::DoubleStar));
    let place = if anchored {
        Place::Fwd
    } else {
        re.insert_str(0, SEGS);
        if multi_segment || inner_double > 0 {
            latch = true;
        }
        Place::Float
    };
    let re = if p.case_insensitive {
        format!("(?i:{re})")
    } else {
        re
    };
    Lowered::Regex { place, latch, re }
}

fn push_seg_piece(re: &mut String, piece: &SegPiece) {
    match piece {
        SegPiece::Literal(s) => push_literal(re, s),
        SegPiece::Star => re.push_str(SEG_RUN),
        SegPiece::Question => re.push_str("[^/]"),
        SegPiece::Class { negated, ranges } => push_class(re, *negated, ranges, Some('/')),
    }
}
