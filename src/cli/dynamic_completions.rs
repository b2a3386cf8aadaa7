//! The part of the generated shell completions that asks the machine: job ids, partitions,
//! GRES, users and node names where a command takes them, from `slurmlet __complete` (see
//! [`super::complete_values`]). Each shell's static completion, as clap writes it, stays
//! underneath: when the helper offers nothing (no daemon answers, `slurmlet` is not on PATH)
//! the static completion answers as before.

use clap_complete::Shell;

/// An option whose value is completed from the daemon: its short name, long name and what
/// `slurmlet __complete` completes.
type DaemonOption = (Option<char>, &'static str, &'static str);

/// Where one command completes from the daemon.
struct Dynamic {
    /// The command.
    command: &'static str,
    /// Its options completed from the daemon.
    options: &'static [DaemonOption],
    /// What its operands are: `jobs`, `scontrol` (scontrol's words) or none.
    operands: Option<&'static str>,
}

/// The options that name a partition, GRES or nodes, as sbatch, srun and salloc take them.
const JOB_OPTIONS: &[DaemonOption] =
    &[(Some('p'), "partition", "partitions"), (None, "gres", "gres"), (Some('w'), "nodelist", "nodes")];

/// Every command's daemon-completed arguments.
const DYNAMIC: &[Dynamic] = &[
    Dynamic { command: "sbatch", options: JOB_OPTIONS, operands: None },
    Dynamic { command: "salloc", options: JOB_OPTIONS, operands: None },
    Dynamic {
        command: "srun",
        options: &[
            (Some('p'), "partition", "partitions"),
            (None, "gres", "gres"),
            (Some('w'), "nodelist", "nodes"),
            (None, "jobid", "jobs"),
        ],
        operands: None,
    },
    Dynamic {
        command: "scancel",
        options: &[(Some('p'), "partition", "partitions"), (Some('u'), "user", "users")],
        operands: Some("jobs"),
    },
    Dynamic { command: "scontrol", options: &[], operands: Some("scontrol") },
    Dynamic {
        command: "squeue",
        options: &[(Some('j'), "jobs", "jobs"), (Some('p'), "partition", "partitions"), (Some('u'), "user", "users")],
        operands: None,
    },
    Dynamic {
        command: "sacct",
        options: &[
            (Some('j'), "jobs", "history"),
            (Some('r'), "partition", "partitions"),
            (Some('u'), "user", "users"),
            (Some('N'), "nodelist", "nodes"),
        ],
        operands: None,
    },
    Dynamic {
        command: "sinfo",
        options: &[(Some('p'), "partition", "partitions"), (Some('n'), "nodes", "nodes")],
        operands: None,
    },
    Dynamic { command: "sstat", options: &[(Some('j'), "jobs", "jobs")], operands: Some("jobs") },
    Dynamic { command: "seff", options: &[], operands: Some("history") },
];

/// `cmd`'s entry of [`DYNAMIC`], its options checked against its clap definition.
fn dynamic_of(cmd: &clap::Command) -> Option<&'static Dynamic> {
    let dynamic = DYNAMIC.iter().find(|d| d.command == cmd.get_name())?;
    for &(short, long, _) in dynamic.options {
        let arg = cmd.get_arguments().find(|a| a.get_long() == Some(long));
        let arg = arg.unwrap_or_else(|| panic!("{} has no --{long} to complete", dynamic.command));
        assert_eq!(arg.get_short(), short, "{} --{long}'s short name", dynamic.command);
    }
    Some(dynamic)
}

/// `static_script` (clap's completion of `cmd` for `shell`) with the daemon's values added
/// where `cmd` takes them.
pub fn extend(shell: Shell, cmd: &clap::Command, static_script: Vec<u8>) -> Vec<u8> {
    let Some(dynamic) = dynamic_of(cmd) else { return static_script };
    let text = String::from_utf8(static_script).expect("clap writes UTF-8");
    let text = match shell {
        Shell::Bash => bash(cmd, dynamic, text),
        Shell::Zsh => zsh(dynamic, text),
        Shell::Fish => fish(dynamic, text),
        _ => text,
    };
    text.into_bytes()
}

/// The names (`-p`, `--partition`) of `cmd`'s options that take a value.
fn options_taking_values(cmd: &clap::Command) -> Vec<String> {
    let mut names = Vec::new();
    for arg in cmd.get_arguments().filter(|a| !a.is_positional() && a.get_action().takes_values()) {
        names.extend(arg.get_short_and_visible_aliases().unwrap_or_default().iter().map(|s| format!("-{s}")));
        names.extend(arg.get_long_and_visible_aliases().unwrap_or_default().iter().map(|l| format!("--{l}")));
    }
    names
}

/// The option names of `option` as a shell `case` pattern: `-p|--partition`.
fn pattern(option: &DaemonOption) -> String {
    match option.0 {
        Some(short) => format!("-{short}|--{}", option.1),
        None => format!("--{}", option.1),
    }
}

/// Bash's helper, the same in every file: fills `COMPREPLY` with what `slurmlet __complete`
/// offers, made relative to the word bash completes (which starts after the last `=` or `:`).
const BASH_HELPER: &str = r#"
# What the daemon offers (`slurmlet __complete ARGS…`), into COMPREPLY: $1 is the whole value
# being completed, $2 the part of it bash replaces (after its last = or :).
_slurmlet_ask() {
    command -v slurmlet >/dev/null 2>&1 || return 1
    local whole="$1" part="$2"
    shift 2
    local -a found
    mapfile -t found < <(slurmlet __complete "$@" 2>/dev/null)
    (( ${#found[@]} )) || return 1
    local keep="${whole%"$part"}"
    found=("${found[@]%%$'\t'*}")
    COMPREPLY=("${found[@]#"$keep"}")
}
"#;

fn bash(cmd: &clap::Command, dynamic: &Dynamic, text: String) -> String {
    let name = dynamic.command;
    let mut cases = String::new();
    for option in dynamic.options {
        cases.push_str(&format!(
            "        {})\n            _slurmlet_ask \"$attached$value\" \"$part\" {} \"$value\" && \
             COMPREPLY=(\"${{COMPREPLY[@]/#/$attached}}\") && return 0\n            ;;\n",
            pattern(option),
            option.2
        ));
    }
    let daemon_names: Vec<String> =
        dynamic.options.iter().flat_map(|o| pattern(o).split('|').map(str::to_string).collect::<Vec<_>>()).collect();
    let others: Vec<String> = options_taking_values(cmd).into_iter().filter(|n| !daemon_names.contains(n)).collect();
    if !others.is_empty() {
        cases.push_str(&format!("        {})\n            ;;\n", others.join("|")));
    }
    match dynamic.operands {
        Some("scontrol") => cases.push_str(
            "        *)\n            if [[ $word != -* ]]; then\n                \
             _slurmlet_ask \"$word\" \"$part\" scontrol \"${words[@]:1}\" && return 0\n            \
             fi\n            ;;\n",
        ),
        Some(kind) => cases.push_str(&format!(
            "        *)\n            if [[ $word != -* ]]; then\n                \
             _slurmlet_ask \"$word\" \"$part\" {kind} \"$word\" && return 0\n            fi\n            ;;\n"
        )),
        None => {}
    }
    format!(
        r#"{text}{BASH_HELPER}
# {name}'s arguments that the daemon knows; the rest as above.
_{name}_slurmlet() {{
    local line="${{COMP_LINE:0:COMP_POINT}}" part="$2" word="" opt="" value attached=""
    [[ $part == "=" ]] && part=""
    local -a words
    read -ra words <<< "$line"
    if [[ $line =~ [[:space:]]$ ]]; then
        words+=("")
    fi
    word="${{words[${{#words[@]}}-1]}}"
    (( ${{#words[@]}} > 1 )) && opt="${{words[${{#words[@]}}-2]}}"
    value="$word"
    if [[ $word == --*=* ]]; then
        opt="${{word%%=*}}"
        value="${{word#*=}}"
    elif [[ $word == -[!-]?* ]]; then
        # A short option with its value attached (`-pgpu`), as getopt reads it.
        opt="${{word:0:2}}"
        value="${{word:2}}"
        attached="$opt"
    elif [[ $word == -* ]]; then
        opt=""
    fi
    case "$opt" in
{cases}    esac
    _{name} "$@"
}}

if [[ "${{BASH_VERSINFO[0]}}" -eq 4 && "${{BASH_VERSINFO[1]}}" -ge 4 || "${{BASH_VERSINFO[0]}}" -gt 4 ]]; then
    complete -F _{name}_slurmlet -o nosort -o bashdefault -o default {name}
else
    complete -F _{name}_slurmlet -o bashdefault -o default {name}
fi
"#
    )
}

/// Zsh's helpers, the same in every file: the daemon's values with their descriptions, in
/// the daemon's order, else `_default`.
const ZSH_HELPERS: &str = r#"
# What the daemon offers (`slurmlet __complete ARGS…`, the word under the cursor last), else
# the static completion.
(( $+functions[_slurmlet_offer] )) ||
_slurmlet_offer() {
    local -a found described
    local line value
    (( $+commands[slurmlet] )) &&
        found=("${(@f)$(slurmlet __complete "$@" 2>/dev/null)}")
    for line in "${found[@]}"; do
        [[ -n $line ]] || continue
        value="${line%%$'\t'*}"
        if [[ $line == *$'\t'* ]]; then
            described+=("${value//:/\\:}:${line#*$'\t'}")
        else
            described+=("${value//:/\\:}")
        fi
    done
    if (( ${#described} )); then
        _describe -V -t slurmlet "$1" described
    else
        _default
    fi
}

# An action of _arguments: the kind to complete comes last, after compadd's options.
(( $+functions[_slurmlet_complete] )) ||
_slurmlet_complete() {
    _slurmlet_offer "${@[-1]}" "$PREFIX"
}

# scontrol's words: what the daemon knows after hold, release, show job, update, …
(( $+functions[_slurmlet_scontrol] )) ||
_slurmlet_scontrol() {
    _slurmlet_offer scontrol "${(@)words[1,CURRENT-1]}" "$PREFIX"
}
"#;

fn zsh(dynamic: &Dynamic, text: String) -> String {
    let mut out = String::with_capacity(text.len() + ZSH_HELPERS.len());
    let mut replaced = 0;
    for line in text.split_inclusive('\n') {
        let spec = line.trim_start_matches('\'').trim_start_matches('*');
        let action = dynamic
            .options
            .iter()
            .find(|(short, long, _)| {
                spec.starts_with(&format!("--{long}=[")) || short.is_some_and(|s| spec.starts_with(&format!("-{s}+[")))
            })
            .map(|o| format!("_slurmlet_complete {}", o.2))
            .or_else(|| match dynamic.operands {
                Some("scontrol") if spec.starts_with("::") => Some("_slurmlet_scontrol".to_string()),
                Some(kind) if spec.starts_with("::") => Some(format!("_slurmlet_complete {kind}")),
                _ => None,
            });
        match action {
            Some(action) if line.starts_with('\'') && line.contains(":_default' \\") => {
                out.push_str(&line.replacen(":_default' \\", &format!(":{action}' \\"), 1));
                replaced += 1;
            }
            _ => out.push_str(line),
        }
    }
    let wanted = dynamic.options.iter().map(|o| if o.0.is_some() { 2 } else { 1 }).sum::<usize>()
        + usize::from(dynamic.operands.is_some());
    assert_eq!(replaced, wanted, "{}'s zsh completion: the specs to complete from the daemon", dynamic.command);
    // The helpers go before the lines that run the completion (an autoloaded file runs once).
    let at = out.find("\nif [ \"$funcstack[1]\"").unwrap_or(out.len());
    out.insert_str(at, ZSH_HELPERS);
    out
}

/// Fish's helpers, the same in every file: the daemon's values, else files.
const FISH_HELPERS: &str = r#"
# What the daemon offers (`slurmlet __complete ARGS… WORD`, WORD last), else files.
function __slurmlet_offer
    set -l found
    if command -q slurmlet
        set found (slurmlet __complete $argv 2>/dev/null)
    end
    if set -q found[1]
        printf '%s\n' $found
    else
        __fish_complete_path $argv[-1]
    end
end

# An operand's values (`scancel <TAB>`): the word under the cursor as it is.
function __slurmlet_complete
    __slurmlet_offer $argv (commandline -ct)
end

# An option's value: the word less the option before it, `--partition=` or a short option
# with its value attached (`-pgpu`, as getopt reads it); fish puts the option back in front.
function __slurmlet_value
    __slurmlet_offer $argv (string replace -r -- '^(--[^=]*=|-[^-])' '' (commandline -ct))
end

# scontrol's words: what the daemon knows after hold, release, show job, update, …
function __slurmlet_scontrol
    set -l words (commandline -opc)
    __slurmlet_complete scontrol $words[2..-1]
end
"#;

fn fish(dynamic: &Dynamic, text: String) -> String {
    let name = dynamic.command;
    let mut out = String::from(FISH_HELPERS.trim_start());
    out.push('\n');
    let mut replaced = 0;
    for line in text.lines() {
        let head = line.split(" -d '").next().unwrap_or(line);
        let option = dynamic.options.iter().find(|(short, long, _)| {
            head.ends_with(&format!(" -l {long}")) && short.is_none_or(|s| head.contains(&format!(" -s {s} ")))
        });
        match option {
            Some(o) if line.ends_with(" -r") => {
                out.push_str(&format!("{line} -f -k -a '(__slurmlet_value {})'\n", o.2));
                replaced += 1;
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    assert_eq!(replaced, dynamic.options.len(), "{name}'s fish completion: the options to complete from the daemon");
    match dynamic.operands {
        Some("scontrol") => out.push_str(&format!("complete -c {name} -f -k -a '(__slurmlet_scontrol)'\n")),
        Some(kind) => out.push_str(&format!("complete -c {name} -f -k -a '(__slurmlet_complete {kind})'\n")),
        None => {}
    }
    out
}
