//! Generic resources: `--gres=gpu[:type]:N[,…]` and `--gpus[-per-node]=[type:]N`.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map_res, opt};
use nom::multi::separated_list1;
use nom::sequence::preceded;
use nom::{IResult, Parser};

/// One generic-resource request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresRequest {
    /// Resource name (`gpu`).
    pub name: String,
    /// Optional type (`tesla`, `a100`).
    pub kind: Option<String>,
    /// Count per node.
    pub count: u32,
}

/// One `:`-separated field of a gres item.
fn field(i: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c != ':' && c != ',' && !c.is_whitespace()).parse(i)
}

fn count(i: &str) -> IResult<&str, u32> {
    map_res(digit1, str::parse::<u32>).parse(i)
}

/// `[gres/|gres:]name[:type][:count]`, as the fields written.
fn item(i: &str) -> IResult<&str, (&str, Option<&str>, Option<&str>)> {
    preceded(
        opt(alt((tag("gres/"), tag("gres:")))),
        (field, opt(preceded(char(':'), field)), opt(preceded(char(':'), field))),
    )
    .parse(i)
}

fn is_count(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A type name starts with a letter or `_` (so `1k` or `-1` is neither a count nor a type).
fn is_type(s: &str) -> bool {
    s.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// Parses `--gres` (`gpu`, `gpu:2`, `gpu:tesla:2`, `gres/gpu:2`, comma-separated lists such
/// as `gpu:a100:1,gpu:1`). A count of 0 is allowed (it requests nothing).
///
/// As in Slurm, `name:word` with a non-numeric `word` is a *type* with a count of 1, so
/// `gpu:abc` parses (as type `abc`) and fails later when no GPU of that type exists; a third
/// field must be a count (`gpu:tesla:x` is invalid). The name itself is not checked here
/// (`gpx:1` parses; the daemon knows which resources exist).
pub fn parse_gres(text: &str) -> Result<Vec<GresRequest>, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "gres", value: text.to_string() };
    let (_, items) = all_consuming(separated_list1(char(','), item)).parse(text.trim()).map_err(|_| bad())?;
    let mut out = Vec::with_capacity(items.len());
    for (name, second, third) in items {
        let number = |s: &str| count(s).ok().filter(|(rest, _)| rest.is_empty()).map(|(_, n)| n).ok_or_else(bad);
        let (kind, count) = match (second, third) {
            (None, _) => (None, 1),
            (Some(c), None) if is_count(c) => (None, number(c)?),
            (Some(k), None) if is_type(k) => (Some(k.to_string()), 1),
            (Some(_), None) => return Err(bad()),
            (Some(k), Some(c)) if is_count(c) && is_type(k) => (Some(k.to_string()), number(c)?),
            (Some(_), Some(_)) => return Err(bad()),
        };
        out.push(GresRequest { name: name.to_string(), kind, count });
    }
    Ok(out)
}

/// Parses `--gpus`/`--gpus-per-node` (`N` or `type:N`).
pub fn parse_gpus(text: &str, option: &'static str) -> Result<GresRequest, OptionError> {
    let bad = || OptionError::InvalidSpec { option, value: text.to_string() };
    let (_, (kind, count)) = all_consuming((opt((field, char(':'))), count)).parse(text.trim()).map_err(|_| bad())?;
    if kind.is_some_and(|(k, _)| !is_type(k)) {
        return Err(bad());
    }
    Ok(GresRequest { name: "gpu".into(), kind: kind.map(|(k, _)| k.to_string()), count })
}

/// Renders requests the way `tres_per_node` carries them (`gres/gpu:2`, `gres/gpu:tesla:2`).
pub fn to_tres(requests: &[GresRequest]) -> String {
    requests
        .iter()
        .map(|r| match &r.kind {
            Some(k) => format!("gres/{}:{}:{}", r.name, k, r.count),
            None => format!("gres/{}:{}", r.name, r.count),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses `--tres-per-task` (`cpu=4,gres/gpu=1`, `gres/gpu:a100=2`): entries
/// `trestype[/name[:type]]=count`. Returns the CPUs per task and the GPU requests per task.
///
/// Only `cpu` and `gres/gpu` are resources here; any other is an error naming it.
pub fn parse_tres_per_task(text: &str) -> Result<(Option<u32>, Vec<GresRequest>), OptionError> {
    let bad = |why: String| OptionError::Invalid { option: "tres-per-task", value: text.to_string(), why };
    let mut cpus = None;
    let mut gpus = Vec::new();
    for entry in text.split(',') {
        let Some((name, count)) = entry.split_once('=') else {
            return Err(bad(format!("'{entry}' is not trestype[/name]=count")));
        };
        let count: u32 = count.parse().map_err(|_| bad(format!("'{count}' is not a count")))?;
        match name {
            "cpu" => cpus = Some(count),
            _ => match name.strip_prefix("gres/").or_else(|| name.strip_prefix("gres:")) {
                // The GPU part reads as a --gres item, so its type follows the same rules.
                Some(gres) if gres == "gpu" || gres.starts_with("gpu:") => match parse_gres(&format!("{gres}:{count}"))
                {
                    Ok(mut one) if one.len() == 1 => gpus.push(one.remove(0)),
                    _ => return Err(bad(format!("'{name}' is not a GPU request"))),
                },
                _ => return Err(bad(format!("'{name}' is not a resource here (cpu and gres/gpu are)"))),
            },
        }
    }
    Ok((cpus, gpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(name: &str, kind: Option<&str>, count: u32) -> GresRequest {
        GresRequest { name: name.into(), kind: kind.map(Into::into), count }
    }

    #[test]
    fn gres_forms() {
        assert_eq!(parse_gres("gpu").unwrap(), vec![req("gpu", None, 1)]);
        assert_eq!(parse_gres("gpu:2").unwrap(), vec![req("gpu", None, 2)]);
        assert_eq!(parse_gres("gpu:0").unwrap(), vec![req("gpu", None, 0)]);
        assert_eq!(parse_gres("gpu:8").unwrap(), vec![req("gpu", None, 8)]);
        assert_eq!(parse_gres("gpu:tesla:2").unwrap(), vec![req("gpu", Some("tesla"), 2)]);
        assert_eq!(parse_gres("gres/gpu:2").unwrap(), vec![req("gpu", None, 2)]);
        assert_eq!(parse_gres("gres:gpu:2").unwrap(), vec![req("gpu", None, 2)]);
        assert_eq!(parse_gres("gres/gpu:a100:3").unwrap(), vec![req("gpu", Some("a100"), 3)]);
        assert_eq!(parse_gres("gpu:a100:1,gpu:1").unwrap(), vec![req("gpu", Some("a100"), 1), req("gpu", None, 1)]);
        assert_eq!(parse_gres(" gpu:2 ").unwrap(), vec![req("gpu", None, 2)]);
    }

    #[test]
    fn slurm_quirks() {
        // a word after the name is a type (Slurm then finds no such GPU)
        assert_eq!(parse_gres("gpu:abc").unwrap(), vec![req("gpu", Some("abc"), 1)]);
        // the name is the daemon's business
        assert_eq!(parse_gres("gpx:1").unwrap(), vec![req("gpx", None, 1)]);
    }

    #[test]
    fn bad_gres() {
        for t in [
            "",
            ",",
            "gpu,",
            ",gpu",
            "gpu:",
            "gpu::2",
            ":2",
            "gpu:tesla:x",
            "gpu:a:1:2",
            "gpu:99999999999",
            "gpu 2",
            "gpu:-1",
            "gpu:tesla:-1",
            "gpu:1k",
            "gpu:1:2",
        ] {
            assert_eq!(parse_gres(t), Err(OptionError::InvalidSpec { option: "gres", value: t.into() }), "{t:?}");
        }
        assert_eq!(parse_gres("gpu:").unwrap_err().to_string(), "Invalid --gres specification");
    }

    #[test]
    fn gpus_forms() {
        assert_eq!(parse_gpus("2", "gpus").unwrap(), req("gpu", None, 2));
        assert_eq!(parse_gpus("0", "gpus").unwrap(), req("gpu", None, 0));
        assert_eq!(parse_gpus("tesla:1", "gpus").unwrap(), req("gpu", Some("tesla"), 1));
        assert_eq!(parse_gpus("a100:4", "gpus-per-node").unwrap(), req("gpu", Some("a100"), 4));
        for t in ["", "x", "tesla", "tesla:", ":1", "a:b:1", "-1", "1.5", "2,3"] {
            assert_eq!(
                parse_gpus(t, "gpus"),
                Err(OptionError::InvalidSpec { option: "gpus", value: t.into() }),
                "{t:?}"
            );
        }
        assert_eq!(parse_gpus("x", "gpus-per-node").unwrap_err().to_string(), "Invalid --gpus-per-node specification");
    }

    #[test]
    fn tres_round_trip() {
        let reqs = vec![req("gpu", Some("a100"), 1), req("gpu", None, 2)];
        let tres = to_tres(&reqs);
        assert_eq!(tres, "gres/gpu:a100:1,gres/gpu:2");
        assert_eq!(parse_gres(&tres).unwrap(), reqs);
        assert_eq!(to_tres(&[req("gpu", None, 0)]), "gres/gpu:0");
    }

    #[test]
    fn tres_per_task_gives_cpus_and_gpus_per_task() {
        let (cpus, gpus) = parse_tres_per_task("cpu=4,gres/gpu:a100=2").unwrap();
        assert_eq!(cpus, Some(4));
        assert_eq!(gpus, vec![GresRequest { name: "gpu".into(), kind: Some("a100".into()), count: 2 }]);
        assert_eq!(parse_tres_per_task("gres/gpu=1").unwrap().1[0].count, 1);
        // `gres/gpu:!100=2` was taken with a type that no GRES string could carry (found by
        // fuzzing).
        for bad in ["", "cpu", "cpu=x", "license/matlab=1", "gres/mps=1", "gres/gpu:!100=2", "gres/gpu:a:b=1"] {
            assert!(parse_tres_per_task(bad).is_err(), "{bad}");
        }
    }
}
