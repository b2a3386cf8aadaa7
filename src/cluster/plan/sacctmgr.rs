//! The `sacctmgr` commands that give the cluster's database the box's accounts, users, QOS
//! and limits.
