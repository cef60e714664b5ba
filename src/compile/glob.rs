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
//!
//! An any-depth rule is not compiled with an "any segments" prefix (which
//! every pattern would carry, so that every automaton state holds all of
//! them and building the automaton costs rules × states): its automaton is
//! anchored and walked from every segment start ([`Place::Seg`]). An
//! any-depth rule whose first segment starts with `*` (`**/*.ext`) and
//! that ends at a segment end is walked backwards from every segment end
//! instead ([`Place::SegRev`]), its leading `*` dropped: a suffix of the
//! path up to a `/` that the rest matches is preceded, within its segment,
//! by whatever that `*` stands for.

use super::lower::{Lowered, Place, Shape, Tick, blowup, push_class, push_literal};
use crate::rule::{PathPattern, SegPiece, Segment};

/// `[^/]*`: a run of bytes inside one segment. Byte-level is exact here:
/// literals and `/` are whole characters, so a run between them is a run of
/// whole characters.
const SEG_RUN: &str = "(?-u:[^/])*";
/// `(?:[^/]*/)*`: zero or more whole segments.
pub(crate) const SEGS: &str = "(?:(?-u:[^/])*/)*";

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
    if !anchored {
        if let Some(l) = lower_seg_rev(segs, p.case_insensitive) {
            return l;
        }
    }
    let mut re = String::new();
    let mut latch = false;
    let mut inner_double = 0usize;
    // Stars in the first segment (after a trailing one is dropped), and
    // whether one leads it.
    let mut first_stars = 0usize;
    let mut first_star_led = false;
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
                if i == 0 {
                    let mut kept: &[SegPiece] = pieces;
                    if i == last {
                        while kept.last() == Some(&SegPiece::Star) {
                            kept = &kept[..kept.len() - 1];
                        }
                    }
                    first_stars = kept.iter().filter(|x| **x == SegPiece::Star).count();
                    first_star_led = kept.first() == Some(&SegPiece::Star);
                }
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
    let (place, shape) = if anchored {
        let shape = if latch {
            Shape::Latching
        } else if inner_double == 1 {
            Shape::Tracking
        } else {
            Shape::Pure
        };
        (Place::Fwd, shape)
    } else {
        // Walked from every segment start: as an anchored rule, except
        // that a leading `*` keeps a thread alive through each segment.
        let shape = if latch || (first_star_led && first_stars + inner_double > 1) {
            Shape::Latching
        } else if inner_double == 1 || first_star_led {
            Shape::Tracking
        } else {
            Shape::Pure
        };
        (Place::Seg, shape)
    };
    let first = match segs.first() {
        Some(Segment::Pieces(ps)) if anchored && !p.case_insensitive => match ps.first() {
            Some(SegPiece::Literal(l)) => l.bytes().next(),
            _ => None,
        },
        _ => None,
    };
    let re = if p.case_insensitive {
        format!("(?i:{re})")
    } else {
        re
    };
    Lowered::Regex {
        place,
        shape,
        first,
        re,
        blowup: blowup(path_ticks(segs)),
    }
}

/// The pieces of a path pattern as a forward walk sees them (see
/// [`blowup`]): a `**` is a literal there, since neither its runs nor
/// the runs of other segments cross the `/` that bounds it.
fn path_ticks(segs: &[Segment]) -> Vec<Tick> {
    let mut out = Vec::new();
    for seg in segs {
        match seg {
            Segment::DoubleStar => out.push(Tick::Lit),
            Segment::Pieces(ps) => {
                for p in ps {
                    match p {
                        SegPiece::Star => out.push(Tick::Run),
                        SegPiece::Question => out.push(Tick::Any),
                        SegPiece::Class { .. } => out.push(Tick::Class),
                        SegPiece::Literal(l) => out.extend(l.chars().map(|_| Tick::Lit)),
                    }
                }
            }
        }
        out.push(Tick::Lit);
    }
    out
}

/// The backward form of an any-depth pattern whose first segment starts
/// with `*` and has more after it, and whose last segment is not `**` and
/// does not end with `*` (so that every match ends at a segment end): the
/// regex without the leading `*`s, matched backwards from a `/`.
fn lower_seg_rev(segs: &[Segment], case_insensitive: bool) -> Option<Lowered> {
    let Some(Segment::Pieces(first)) = segs.first() else {
        return None;
    };
    let Some(Segment::Pieces(last)) = segs.last() else {
        return None;
    };
    if last.last() == Some(&SegPiece::Star) || first.first() != Some(&SegPiece::Star) {
        return None;
    }
    let rest: &[SegPiece] = {
        let mut r: &[SegPiece] = first;
        while r.first() == Some(&SegPiece::Star) {
            r = &r[1..];
        }
        r
    };
    if rest.is_empty() {
        return None;
    }
    let mut re = String::new();
    // Unbounded pieces left: stars and inner `**`s.
    let mut unbounded = 0usize;
    for (i, seg) in segs.iter().enumerate() {
        let pieces: &[SegPiece] = match seg {
            Segment::DoubleStar => {
                unbounded += 1;
                re.push_str(SEGS);
                continue;
            }
            Segment::Pieces(_) if i == 0 => rest,
            Segment::Pieces(ps) => ps,
        };
        let mut prev_star = false;
        for piece in pieces {
            if *piece == SegPiece::Star && !prev_star {
                unbounded += 1;
            }
            prev_star = *piece == SegPiece::Star;
            push_seg_piece(&mut re, piece);
        }
        re.push('/');
    }
    let shape = match unbounded {
        0 => Shape::Pure,
        1 => Shape::Tracking,
        _ => Shape::Latching,
    };
    let re = if case_insensitive {
        format!("(?i:{re})")
    } else {
        re
    };
    Some(Lowered::Regex {
        place: Place::SegRev,
        shape,
        first: None,
        re,
        // Walked backwards.
        blowup: blowup(path_ticks(segs).into_iter().rev()),
    })
}

fn push_seg_piece(re: &mut String, piece: &SegPiece) {
    match piece {
        SegPiece::Literal(s) => push_literal(re, s),
        SegPiece::Star => re.push_str(SEG_RUN),
        SegPiece::Question => re.push_str("[^/]"),
        SegPiece::Class { negated, ranges } => push_class(re, *negated, ranges, Some('/')),
    }
}
