//! The lists of the job report's conditions, read as Slurm reads them. The job report
//! keeps Slurm's own list readers' quirks, because they decide what is reported:
//!
//! * names (`accounts=`, `grouping=`, `format=`, …): trimmed, lower-cased, a repeated
//!   name moved to the end, and an empty list read as one empty name (so `accounts=`
//!   matches no account rather than every one);
//! * users: names or uids, each an existing user, or the whole list is dropped;
//! * `jobs=`: only the ids followed by a comma are read, and an empty entry ends the list;
//! * numbers (`grouping=` sizes, `%width`): C's `atoi`.

/// Adds the comma separated `names` to `list` as Slurm's `slurm_addto_char_list` does:
/// a leading quote quotes up to the next one, other quotes become backquotes, a
/// comma inside brackets belongs to a host list (`n[1,2]` is expanded), a trailing comma
/// is ignored, each name is trimmed and lower-cased, and a name already in the list moves
/// to its end. When nothing was added, what is left (maybe nothing) is added as a name.
pub fn add_names(list: &mut Vec<String>, names: &str) {
    let mut chars: Vec<char> = names.chars().collect();
    let (mut i, quote) = leading_quote(&chars);
    let mut start = i;
    let count = list.len();
    let (mut in_brackets, mut after_brackets) = (false, false);
    while i < chars.len() {
        let c = chars[i];
        if Some(c) == quote {
            break;
        } else if c == '"' || c == '\'' {
            chars[i] = '`';
        } else if c == '[' {
            in_brackets = true;
        } else if c == ',' && !in_brackets {
            if !after_brackets {
                if i + 1 == chars.len() {
                    break;
                }
                if i != start {
                    push_name(list, chars[start..i].iter().collect());
                }
            }
            after_brackets = false;
            start = i + 1;
        } else if c == ']' {
            after_brackets = true;
            in_brackets = false;
            let text: String = chars[start..=i].iter().collect();
            if let Ok(hosts) = crate::options::hostlist::expand(&text) {
                for host in hosts {
                    push_name(list, host);
                    start = i + 1;
                }
            }
        }
        i += 1;
    }
    if count == list.len() || i > start {
        push_name(list, chars[start..i].iter().collect());
    }
}

/// One name into the list: trimmed, lower-cased, and moved to the end if it was there.
fn push_name(list: &mut Vec<String>, name: String) {
    let name = name.trim().to_lowercase();
    list.retain(|n| *n != name);
    list.push(name);
}

/// Why a users list was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownUser(pub String);

/// Adds the users of `names` (names, or the uids of existing users) to `uids`, as Slurm's
/// `slurm_addto_id_char_list` does, and says how many were new. An unknown user empties
/// the whole list (the report then takes every user's jobs, as Slurm's does).
pub fn add_users(uids: &mut Vec<u32>, names: &str) -> Result<usize, UnknownUser> {
    let mut added = 0;
    for name in parse_list(names) {
        let Some(uid) = uid_of(&name) else {
            uids.clear();
            return Err(UnknownUser(name));
        };
        if !uids.contains(&uid) {
            uids.push(uid);
            added += 1;
        }
    }
    Ok(added)
}

/// The entries of a list as Slurm's `slurm_parse_char_list` splits it: quotes as in
/// [`add_names`], empty entries skipped, case kept.
fn parse_list(names: &str) -> Vec<String> {
    let mut chars: Vec<char> = names.chars().collect();
    let (mut i, quote) = leading_quote(&chars);
    let mut start = i;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        if Some(c) == quote {
            break;
        } else if c == '"' || c == '\'' {
            chars[i] = '`';
        } else if c == ',' {
            if i != start {
                out.push(chars[start..i].iter().collect());
            }
            start = i + 1;
        }
        i += 1;
    }
    if start < i {
        out.push(chars[start..i].iter().collect());
    }
    out
}

/// The uid of a user name, or of a number that is an existing user's uid.
fn uid_of(name: &str) -> Option<u32> {
    if let Some((uid, _)) = crate::identity::user_ids(name) {
        return Some(uid);
    }
    let uid: u32 = name.parse().ok()?;
    crate::identity::user_name_of(uid).map(|_| uid)
}

/// The job ids of `jobs=` as Slurm's job reports read them: an id counts only when a comma
/// follows it (`jobs=5` selects nothing, so every job is reported; `jobs=5,` selects job
/// 5), leading blanks are skipped, `.step` is dropped, a non-number is 0, and an empty
/// entry ends the list.
pub fn job_ids(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(comma) = rest.find(',') {
        let entry = rest[..comma].trim_start();
        if entry.is_empty() {
            break;
        }
        let job = entry.split('.').next().unwrap_or(entry);
        out.push(atoi(job) as u32);
        rest = &rest[comma + 1..];
    }
    out
}

/// C's `atoi`: blanks, a sign and the digits that follow; 0 when there are none.
pub fn atoi(text: &str) -> i32 {
    let t = text.trim_start();
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| (n * 10 + i64::from(d - b'0')).min(i64::from(u32::MAX) + 1));
    let n = if negative { -n } else { n };
    n as i32
}

/// Where the names of a list start, and the quote it opens with: a leading `"` or `'`
/// quotes up to the next one.
fn leading_quote(chars: &[char]) -> (usize, Option<char>) {
    match chars.first() {
        Some(&q) if q == '"' || q == '\'' => (1, Some(q)),
        _ => (0, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(parts: &[&str]) -> Vec<String> {
        let mut list = Vec::new();
        for p in parts {
            add_names(&mut list, p);
        }
        list
    }

    #[test]
    fn names_are_trimmed_lowered_and_a_repeat_moves_to_the_end() {
        assert_eq!(names(&["Physics, chem"]), ["physics", "chem"]);
        assert_eq!(names(&["50,250,50"]), ["250", "50"]);
        assert_eq!(names(&["a,"]), ["a"]);
        assert_eq!(names(&["a,,b"]), ["a", "b"]);
        assert_eq!(names(&["a", "b,a"]), ["b", "a"]);
        assert_eq!(names(&["'a,b'"]), ["a", "b"]);
    }

    #[test]
    fn an_empty_list_is_one_empty_name() {
        assert_eq!(names(&[""]), [""]);
        assert_eq!(names(&[","]), [""]);
    }

    #[test]
    fn brackets_are_a_host_list() {
        assert_eq!(names(&["n[1-2],m"]), ["n1", "n2", "m"]);
    }

    #[test]
    fn only_ids_followed_by_a_comma_are_jobs() {
        assert_eq!(job_ids("5"), Vec::<u32>::new());
        assert_eq!(job_ids("5,"), [5]);
        assert_eq!(job_ids("5,6"), [5]);
        assert_eq!(job_ids("5, 6.1,7,"), [5, 6, 7]);
        assert_eq!(job_ids("5,,6,"), [5]);
        assert_eq!(job_ids("x,"), [0]);
    }

    #[test]
    fn atoi_reads_as_c_reads() {
        assert_eq!(atoi("50"), 50);
        assert_eq!(atoi(" 20%13"), 20);
        assert_eq!(atoi("-20"), -20);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(atoi(""), 0);
    }

    #[test]
    fn users_are_names_or_uids_and_one_unknown_drops_them_all() {
        let mut uids = Vec::new();
        assert_eq!(add_users(&mut uids, "root,0"), Ok(1));
        assert_eq!(uids, [0]);
        assert_eq!(add_users(&mut uids, "root"), Ok(0));
        let err = add_users(&mut uids, "root,no-such-user-here");
        assert_eq!(err, Err(UnknownUser("no-such-user-here".into())));
        assert!(uids.is_empty());
    }
}
