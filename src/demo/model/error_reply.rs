//! The HTTP error answers: status, extra header lines and the JSON body in the shape
//! OpenAI-compatible providers use (`{"error": {"message", "type", "param", "code"}}`).

use serde_json::{Value, json};

use super::step::Reply;

/// An error answer as it goes on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// The answer of an error or overflow reply; `None` for the streamed kinds.
pub fn error_answer(reply: &Reply) -> Option<ErrorAnswer> {
    match reply {
        Reply::Error {
            status,
            headers,
            message,
            error_type,
            code,
            body,
        } => {
            let body = body.clone().unwrap_or_else(|| {
                json!({ "error": {
                    "message": message,
                    "type": error_type.as_deref().unwrap_or("mock_error"),
                    "param": null,
                    "code": code,
                }})
            });
            Some(ErrorAnswer {
                status: *status,
                headers: headers.iter().map(|(n, v)| (n.clone(), v.clone())).collect(),
                body,
            })
        }
        Reply::Overflow => Some(ErrorAnswer {
            status: 400,
            headers: Vec::new(),
            body: json!({ "error": {
                "message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }}),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::model::step::Step;

    #[test]
    fn error_and_overflow_bodies() {
        let answer = error_answer(&Step::error(503, "busy").reply).unwrap();
        assert_eq!(
            (answer.status, answer.body["error"]["message"].as_str()),
            (503, Some("busy"))
        );
        assert!(answer.headers.is_empty());
        let answer = error_answer(&Step::overflow().reply).unwrap();
        assert_eq!(answer.status, 400);
        assert_eq!(answer.body["error"]["code"], "context_length_exceeded");
        assert!(error_answer(&Step::empty().reply).is_none());
    }

    #[test]
    fn rate_limit_names_the_wait_in_headers_and_message() {
        let answer = error_answer(&Step::rate_limited(25).reply).unwrap();
        assert_eq!(answer.status, 429);
        assert_eq!(
            answer.headers,
            [
                ("retry-after".to_string(), "25".to_string()),
                ("x-ratelimit-reset-requests".to_string(), "25s".to_string())
            ]
        );
        let error = &answer.body["error"];
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("Please try again in 25s")
        );
        assert_eq!(error["code"], "rate_limit_exceeded");
        assert_eq!(error["type"], "requests");
        assert!(error["param"].is_null());
    }
}
