//! The OpenAPI 3 document of the daemon, served at `GET /openapi/v3` (and `/openapi`,
//! `/openapi.json`, as slurmrestd does).
//!
//! It is a subset of slurmrestd 26.05's data_parser v0.0.43 document, with the same paths and
//! schema names, plus slurmlet's own `/slurmlet/v1` endpoints. Replies are described by
//! slurmrestd's own schemas; request bodies by what the daemon reads: `v0.0.43_job_desc_msg`
//! lists only the fields slurmlet applies (any other is refused), and numbers are bounded by
//! the widths the daemon reads them into. Endpoints that OpenAPI cannot describe (the two
//! that become streams) and the one that stops the daemon are listed, with why, under
//! `x-slurmlet-undocumented`.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The document, as served.
pub const DOCUMENT: &str = include_str!("openapi.json");

/// `GET /openapi/v3`: the document.
pub async fn document() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::{JobDescMsg, DATA_PARSER};
    use crate::daemon::http::routes::ENDPOINTS;
    use serde_json::Value;
    use std::collections::BTreeSet;

    /// Endpoints the document describes that this build does not route yet: slurmrestd's job
    /// update lands with its own change, which removes it from here.
    const NOT_ROUTED_YET: &[(&str, &str)] = &[];

    fn doc() -> Value {
        serde_json::from_str(DOCUMENT).expect("the OpenAPI document is JSON")
    }

    fn key(method: &str, path: &str) -> (String, String) {
        (method.to_ascii_uppercase(), path.trim_end_matches('/').to_string())
    }

    fn operations(paths: &Value) -> BTreeSet<(String, String)> {
        let mut ops = BTreeSet::new();
        for (path, item) in paths.as_object().expect("an object of paths") {
            for method in item.as_object().expect("a path item").keys() {
                ops.insert(key(method, path));
            }
        }
        ops
    }

    #[test]
    fn the_document_and_the_router_list_the_same_endpoints() {
        let doc = doc();
        let documented = operations(&doc["paths"]);
        let left_out = operations(&doc["x-slurmlet-undocumented"]);
        let routed: BTreeSet<_> = ENDPOINTS.iter().map(|e| key(e.method, e.path)).collect();
        let pending: BTreeSet<_> = NOT_ROUTED_YET.iter().map(|(m, p)| key(m, p)).collect();
        for op in &routed {
            assert!(documented.contains(op) || left_out.contains(op), "{op:?} is routed but not in the document");
            assert!(!pending.contains(op), "{op:?} is routed now: take it out of NOT_ROUTED_YET");
        }
        for op in documented.iter().chain(&left_out) {
            assert!(routed.contains(op) || pending.contains(op), "{op:?} is in the document but not routed");
        }
        assert!(documented.is_disjoint(&left_out));
    }

    #[test]
    fn the_document_uses_slurmrestds_schema_names_and_every_reference_resolves() {
        let doc = doc();
        assert_eq!(doc["openapi"], "3.0.3");
        assert_eq!(doc["info"]["x-slurm"]["data_parsers"][0]["plugin"], DATA_PARSER);
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for name in [
            "job_submit_req",
            "job_desc_msg",
            "openapi_job_submit_response",
            "openapi_job_info_resp",
            "openapi_kill_job_resp",
            "openapi_nodes_resp",
            "openapi_partition_resp",
            "openapi_ping_array_resp",
            "openapi_resp",
        ] {
            assert!(schemas.contains_key(&format!("{DATA_PARSER}_{name}")), "{name} missing");
        }
        for name in schemas.keys() {
            assert!(name.starts_with(&format!("{DATA_PARSER}_")) || name.starts_with("slurmlet_"), "{name}");
        }
        let mut refs = Vec::new();
        collect_refs(&doc, &mut refs);
        assert!(refs.len() > 50, "{} references", refs.len());
        for r in refs {
            let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{r}"));
            assert!(schemas.contains_key(name), "{r} does not resolve");
        }
    }

    #[test]
    fn the_job_description_lists_exactly_the_fields_the_daemon_reads() {
        let doc = doc();
        let desc = &doc["components"]["schemas"][format!("{DATA_PARSER}_job_desc_msg")];
        let fields: BTreeSet<&str> = desc["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(fields, JobDescMsg::KNOWN.iter().copied().collect());
        assert_eq!(desc["additionalProperties"], false);
        let req = &doc["components"]["schemas"][format!("{DATA_PARSER}_job_submit_req")];
        let top: BTreeSet<&str> = req["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(top, ["job", "script"].into_iter().collect());
    }

    #[test]
    fn a_client_reads_from_the_documents_paths_the_one_data_parser_slurmlet_speaks() {
        let ours = crate::api::version::offered_in_openapi(DOCUMENT.as_bytes()).unwrap();
        assert_eq!(ours, BTreeSet::from([crate::api::version::DataParser::v0_0(43)]));
    }

    fn collect_refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r);
                }
                m.values().for_each(|v| collect_refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
            _ => {}
        }
    }
}
