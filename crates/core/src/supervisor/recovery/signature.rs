//! SAR-L1: a tool call's identity, independent of the order of its argument keys.

use serde_json::Value;

/// JSON with object keys sorted at every depth; arrays keep their order.
pub fn stable_json(value: &Value) -> String {
    let mut out = String::new();
    write_stable(value, &mut out);
    out
}

fn write_stable(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(key) {
                    write_stable(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_stable(item, out);
            }
            out.push(']');
        }
        primitive => out.push_str(&primitive.to_string()),
    }
}

/// Tool name and arguments; missing arguments count as `{}`.
pub fn tool_signature(tool_name: &str, args: &Value) -> String {
    let args = if args.is_null() {
        "{}".to_string()
    } else {
        stable_json(args)
    };
    format!("{tool_name}\n{args}")
}
