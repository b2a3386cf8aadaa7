//! Text made safe for a URL's query (and for a file name).

/// `text` with every byte but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`)
/// written as `%XX`.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_unreserved_characters_stay() {
        assert_eq!(super::percent_encode("a b,c/é~x.y-z_"), "a%20b%2Cc%2F%C3%A9~x.y-z_");
    }
}
