//! The commands' order, quoting and refusals.

use super::*;

/// A configuration read from `text` as the daemon reads its file.
fn config(text: &str) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slurmlet.toml");
    std::fs::write(&path, format!("gpus = 0\n{text}")).unwrap();
    Config::load(&path).unwrap()
}

fn named(uid: u32) -> Option<String> {
    Some(format!("u{uid}"))
}

const LAB: &str = r#"
preempt_type = "preempt/qos"
preempt_mode = "REQUEUE"
default_account = "lab"
[limits]
max_running_jobs_per_user = 8
max_gpus_per_user = 4
[qos.normal]
max_jobs_per_user = 5
[qos.scav]
usage_factor = 0.5
max_wall = "1-0"
max_tres_per_user = "cpu=8,mem=64G,gres/gpu=2"
grp_tres = "gres/gpu=4"
max_submit_jobs_per_user = 20
flags = ["DenyOnLimit"]
grace_time = 120
preempt_mode = "CANCEL"
[qos.high]
priority = 100
preempt = ["scav"]
description = "Bob's deadlines"
[accounts.vision]
parent = "lab"
fairshare = 2
users = ["4711", "4712"]
default_qos = "scav"
[accounts.lab]
fairshare = 3
description = "the whole lab"
users = { 4711 = 2 }
qos = ["normal", "scav", "high"]
[users.4711]
default_account = "vision"
[users.4712]
default_qos = "high"
"#;

#[test]
fn the_cluster_then_qos_then_root_then_parents_then_users() {
    let lines = commands(&config(LAB), "lab cluster", &named).unwrap();
    assert_eq!(
        lines,
        [
            "sacctmgr -i add cluster 'lab cluster'",
            "sacctmgr -i add qos scav",
            "sacctmgr -i add qos high",
            "sacctmgr -i modify qos normal set MaxTRESPerUser=gres/gpu=4 MaxJobsPerUser=5",
            "sacctmgr -i modify qos scav set MaxWall=1440 MaxTRESPerUser=cpu=8,mem=65536M,gres/gpu=2 \
             GrpTRES=gres/gpu=4 MaxSubmitJobsPerUser=20 UsageFactor=0.5 Flags=DenyOnLimit PreemptMode=CANCEL \
             GraceTime=120",
            "sacctmgr -i modify qos high set Priority=100 Preempt=scav Description='Bob'\\''s deadlines'",
            "sacctmgr -i modify account root where cluster='lab cluster' set qos=normal,scav,high defaultqos=normal",
            "sacctmgr -i add account lab cluster='lab cluster' parent=root fairshare=3 \
             description='the whole lab' organization=lab qos=normal,scav,high defaultqos=normal",
            "sacctmgr -i add account vision cluster='lab cluster' parent=lab fairshare=2 description=vision \
             organization=lab defaultqos=scav",
            "sacctmgr -i add user u4711 cluster='lab cluster' account=vision fairshare=1 defaultaccount=vision",
            "sacctmgr -i add user u4711 cluster='lab cluster' account=lab fairshare=2",
            "sacctmgr -i add user u4712 cluster='lab cluster' account=vision fairshare=1 defaultaccount=vision \
             defaultqos=high",
        ]
    );
}

#[test]
fn a_uid_with_no_name_is_refused_naming_it_and_its_account() {
    let no_4712 = |uid: u32| (uid != 4712).then(|| format!("u{uid}"));
    let e = commands(&config(LAB), "lab", &no_4712).unwrap_err();
    assert_eq!(e, SacctmgrError::NoUserName { uid: 4712, account: "vision".into() });
    assert_eq!(
        e.to_string(),
        "uid 4712 (in account vision) has no user name: the cluster's database knows users by name"
    );
}

#[test]
fn values_the_shell_would_split_or_expand_are_quoted() {
    assert_eq!(quote("plain-name_1.2"), "plain-name_1.2");
    assert_eq!(quote("gres/gpu=2,cpu=8"), "gres/gpu=2,cpu=8");
    assert_eq!(quote("two words"), "'two words'");
    assert_eq!(quote("it's"), r"'it'\''s'");
    assert_eq!(quote("$HOME;rm"), "'$HOME;rm'");
    assert_eq!(quote(""), "''");
    let c = config("[accounts.a]\ndescription = \"Physics & Chemistry\"\norganization = \"x\"");
    let lines = commands(&c, "c", &named).unwrap();
    assert!(lines.contains(
        &"sacctmgr -i add account a cluster=c parent=root fairshare=1 \
                             description='Physics & Chemistry' organization=x"
            .to_string()
    ));
}

#[test]
fn no_accounts_makes_the_default_account_only() {
    let c = config("");
    assert_eq!(
        commands(&c, "c", &named).unwrap(),
        [
            "sacctmgr -i add cluster c",
            "sacctmgr -i add account default cluster=c parent=root fairshare=1 description=default \
             organization=default"
        ]
    );
    assert!(notes(&c)[0].contains("this machine takes any account a job names"), "{:?}", notes(&c));
}

#[test]
fn the_accounts_of_users_without_a_tree_are_made_under_root() {
    let mut c = config("default_account = \"a\"");
    c.accounts = Some([(0, vec!["b".to_string(), "a".to_string()])].into());
    let lines = commands(&c, "c", &named).unwrap();
    assert_eq!(
        lines[1..],
        [
            "sacctmgr -i add account a cluster=c parent=root fairshare=1 description=a organization=a",
            "sacctmgr -i add account b cluster=c parent=root fairshare=1 description=b organization=b",
            "sacctmgr -i add user u0 cluster=c account=b fairshare=1 defaultaccount=b",
            "sacctmgr -i add user u0 cluster=c account=a fairshare=1",
        ]
    );
    // The cluster has root already: add user would keep its default account.
    let lines = commands(&c, "c", &|_| Some("root".into())).unwrap();
    assert_eq!(lines.last().unwrap(), "sacctmgr -i modify user root where cluster=c set defaultaccount=b");
}

#[test]
fn defaults_the_cluster_would_refuse_are_replaced_and_noted() {
    let c = config(
        "[qos.a]\n[qos.b]\n[accounts.x]\nqos = [\"a\"]\ndefault_qos = \"b\"\nusers = [\"4711\"]\n\
         [users.4711]\ndefault_qos = \"b\"\n[limits]\nmax_gpus_per_user = 2",
    );
    let lines = commands(&c, "c", &named).unwrap();
    assert_eq!(
        lines[6..],
        [
            "sacctmgr -i add account x cluster=c parent=root fairshare=1 description=x organization=x qos=a \
             defaultqos=a",
            "sacctmgr -i add user u4711 cluster=c account=x fairshare=1 defaultaccount=x",
        ]
    );
    let notes = notes(&c);
    for says in [
        "accounts.x: its default QOS b is not among the QOS it offers; the cluster's is a",
        "users: uid 4711's default QOS b is not among the QOS account x offers",
        "jobs in a, b are not counted",
    ] {
        assert!(notes.iter().any(|n| n.contains(says)), "{says}: {notes:?}");
    }
}

#[test]
fn what_sacctmgr_would_change_is_noted() {
    let notes = notes(&config(LAB));
    assert!(notes.iter().any(|n| n.ends_with("in lower case: Bob's deadlines")), "{notes:?}");
    assert!(notes.iter().any(|n| n.ends_with("as a backquote (`): Bob's deadlines")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("users the accounts do not list charge 'lab'")), "{notes:?}");
    assert!(!notes.iter().any(|n| n.contains("default QOS")), "every default is offered: {notes:?}");
}

#[test]
fn root_offers_its_own_list_or_every_qos() {
    let c = config("[qos.a]\n[qos.b]\n[accounts.root]\nqos = [\"a\"]\ndefault_qos = \"b\"");
    let lines = commands(&c, "c", &named).unwrap();
    assert_eq!(lines[3], "sacctmgr -i modify account root where cluster=c set qos=a defaultqos=a");
    assert!(notes(&c).iter().any(|n| n.starts_with("accounts.root: its default QOS b is not among")));
    let lines = commands(&config("[qos.a]"), "c", &named).unwrap();
    assert_eq!(lines[2], "sacctmgr -i modify account root where cluster=c set qos=normal,a defaultqos=normal");
    let lines = commands(&config("[accounts.root]\ndefault_qos = \"normal\""), "c", &named).unwrap();
    assert_eq!(lines[1], "sacctmgr -i modify account root where cluster=c set defaultqos=normal");
}
