//! Provider-limit classification against the wordings real providers use (docs/provider-limits.md).
//! The texts are shortened paraphrases that keep every phrase, number and field the parser depends
//! on. "Healthy twin" rows carry numbers that are not reset times and must not become one.

use pokeshell_core::supervisor::limit::{
    ErrorKind, NotifyWhy, Plan, ProviderError, RESUME_MARGIN_MS, ResumeSource, backoff_ms, classify, plan,
};
use proptest::prelude::*;

use ErrorKind::{Fatal, Network, Overloaded, RateLimit, ServerError, Unknown, UsageLimit};

/// 2026-11-30T17:00:00Z, the wall time every row is classified at.
const NOW: u64 = 1_796_058_000_000;

/// The expected reset: none, a delay from `NOW`, or a UTC wall time.
#[derive(Clone, Copy, Debug)]
enum Reset {
    None,
    In(u64),
    At(i64, u32, u32, u32, u32, u32),
}

/// Epoch ms of a UTC date and time, counted day by day (an oracle independent of the parser's).
fn utc(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> u64 {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut days: u64 = (1970..y).map(|y| if leap(y) { 366 } else { 365 }).sum();
    let month_days = [
        31,
        if leap(y) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    days += month_days.iter().take(mo as usize - 1).sum::<u64>() + u64::from(d) - 1;
    ((days * 24 + u64::from(h)) * 60 + u64::from(mi)) * 60_000 + u64::from(s) * 1000
}

impl Reset {
    fn wall_ms(self) -> Option<u64> {
        match self {
            Reset::None => None,
            Reset::In(ms) => Some(NOW + ms),
            Reset::At(y, mo, d, h, mi, s) => Some(utc(y, mo, d, h, mi, s)),
        }
    }
}

struct Row {
    provider: &'static str,
    text: &'static str,
    kind: ErrorKind,
    reset: Reset,
    /// Local offset east of UTC, in seconds, for texts with zone-less clock times.
    local: i32,
}

const fn row(provider: &'static str, text: &'static str, kind: ErrorKind, reset: Reset) -> Row {
    Row {
        provider,
        text,
        kind,
        reset,
        local: 0,
    }
}

const fn row_in_zone(
    provider: &'static str,
    text: &'static str,
    kind: ErrorKind,
    reset: Reset,
    local: i32,
) -> Row {
    Row {
        provider,
        text,
        kind,
        reset,
        local,
    }
}

const H: u64 = 3_600_000;
const M: u64 = 60_000;
const S: u64 = 1_000;

#[rustfmt::skip]
const ROWS: &[Row] = &[
    // OpenAI and OpenAI-compatible servers, as pi formats them ("<status>: <body>").
    row("openai", r#"429: {"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#, RateLimit, Reset::In(644)),
    row("pi", r#"Retry failed after 3 attempts: 429: {"message":"Rate limit reached for requests per minute. Please try again in 25s."}"#, RateLimit, Reset::In(25 * S)),
    row("pi", r#"Error: Retry failed after 1 attempts: 429: {"message":"Rate limit reached. Please try again in 1m30s."}"#, RateLimit, Reset::In(90 * S)),
    row("openai", r#"429: {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#, UsageLimit, Reset::None),
    row("openai", "429 status code (no body)", RateLimit, Reset::None),
    row("openai", "429 Too Many Requests\nx-ratelimit-reset-requests: 1s\nx-ratelimit-reset-tokens: 6m0s", RateLimit, Reset::In(6 * M)),
    row("openai", r#"400: {"error":{"message":"This model's maximum context length is 128000 tokens. However, you requested 130472 tokens (126376 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","code":"context_length_exceeded"}}"#, Fatal, Reset::None),
    row("openai", r#"401: {"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}"#, Fatal, Reset::None),
    row("openai", r#"404: {"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","code":"model_not_found"}}"#, Fatal, Reset::None),
    row("openai", r#"500: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error"}}"#, ServerError, Reset::None),
    row("openai", "Connection error.: connect ECONNREFUSED 127.0.0.1:443 (ECONNREFUSED)", Network, Reset::None),
    row("openai", "Request timed out.", Network, Reset::None),
    // Anthropic.
    row("anthropic", r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CVwSZ1dsfvoqCcJkaNm4m"}"#, Overloaded, Reset::None),
    row("anthropic", r#"429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (0dccdde6-f924) of 20,000 input tokens per minute. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}"#, RateLimit, Reset::None),
    row("anthropic", "429 rate_limit_error\nretry-after: 25\nanthropic-ratelimit-requests-reset: 2026-11-30T17:05:00Z", RateLimit, Reset::At(2026, 11, 30, 17, 5, 0)),
    row("anthropic", r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC."}}"#, UsageLimit, Reset::At(2026, 12, 1, 0, 0, 0)),
    row_in_zone("claude plan", "You've hit your limit · resets 7pm (Europe/Warsaw)", UsageLimit, Reset::At(2026, 11, 30, 18, 0, 0), 3600),
    row_in_zone("claude plan", "Claude usage limit reached. Your limit will reset at Dec 2, 10am.", UsageLimit, Reset::At(2026, 12, 2, 9, 0, 0), 3600),
    row("claude plan", "Claude AI usage limit reached|1796061600", UsageLimit, Reset::At(2026, 11, 30, 18, 0, 0)),
    row("anthropic", r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}"#, UsageLimit, Reset::None),
    row("anthropic", r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#, Fatal, Reset::None),
    row("anthropic", r#"401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#, Fatal, Reset::None),
    row("anthropic", "Anthropic stream ended before message_stop", Network, Reset::None),
    // Google Gemini / Vertex.
    row("gemini", r#"429: {"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_paid_tier_input_token_count, limit: 4000000\nPlease retry in 47.434392449s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"47s"}]}}"#, UsageLimit, Reset::In(47_434)),
    row("gemini", r#"{"error":{"code":429,"message":"Resource exhausted. Please try again later.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"25s"}]}}"#, RateLimit, Reset::In(25 * S)),
    row("gemini cli", "Cloud Code Assist API error (429): You have exhausted your capacity on this model. Your quota will reset after 12h34m16s.", UsageLimit, Reset::In(12 * H + 34 * M + 16 * S)),
    row("vertex", "429 Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.", RateLimit, Reset::None),
    row("gemini", r#"400: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}"#, Fatal, Reset::None),
    row("gemini", "400: The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", Fatal, Reset::None),
    // OpenRouter: X-RateLimit-Reset is epoch milliseconds, relayed inside the error metadata.
    row("openrouter", r#"429: {"error":{"message":"Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1796083200000"}}}}"#, UsageLimit, Reset::At(2026, 12, 1, 0, 0, 0)),
    row("openrouter", r#"429: {"error":{"message":"Rate limit exceeded: free-models-per-min.","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"20","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1796058060000"}}}}"#, RateLimit, Reset::In(60 * S)),
    row("openrouter", r#"402: {"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 65536 tokens, but can only afford 1200.","code":402}}"#, UsageLimit, Reset::None),
    row("openrouter", r#"502: {"error":{"message":"Provider returned error","code":502}}"#, ServerError, Reset::None),
    // z.ai (GLM): plan limits carry a zone-less stamp in Beijing time.
    row("z.ai", r#"429: {"error":{"code":"1302","message":"Rate limit reached for requests"}}"#, RateLimit, Reset::None),
    row("z.ai", r#"429: {"error":{"code":"1302","message":"High concurrency usage of this API, please reduce concurrency or contact customer service to increase limits"}}"#, RateLimit, Reset::None),
    row("z.ai", r#"429 {"type":"error","error":{"type":"rate_limit_error","code":"1308","message":"[1308][Usage limit reached for 5 hour. Your limit will reset at 2026-12-01 05:35:41][20261130170000b49555]"}}"#, UsageLimit, Reset::At(2026, 11, 30, 21, 35, 41)),
    row("z.ai", r#"429 Too Many Requests: {"error":{"code":"1308","message":"已达到 5 小时的使用上限。您的限额将在 2026-12-01 05:35:41 重置。"}}"#, UsageLimit, Reset::At(2026, 11, 30, 21, 35, 41)),
    // Mistral.
    row("mistral", r#"429: {"object":"error","message":"Rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}"#, RateLimit, Reset::None),
    row("mistral", r#"429: {"message":"Requests rate limit exceeded"}"#, RateLimit, Reset::None),
    row("mistral", r#"429: {"object":"error","message":"Service tier capacity exceeded for this model.","type":"service_tier_capacity_exceeded","code":"3505"}"#, Overloaded, Reset::None),
    // Groq.
    row("groq", r#"429: {"error":{"message":"Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_123` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5747, Requested 4251. Please try again in 59.977s. Visit https://console.groq.com/docs/rate-limits for more information.","type":"tokens","code":"rate_limit_exceeded"}}"#, RateLimit, Reset::In(59_977)),
    row("groq", r#"429: {"error":{"message":"Rate limit reached for model `llama-3.1-8b-instant` on requests per day (RPD): Limit 14400, Used 14400, Requested 1. Please try again in 2m59.56s.","type":"requests","code":"rate_limit_exceeded"}}"#, UsageLimit, Reset::In(179_560)),
    // DeepSeek.
    row("deepseek", "402 Insufficient Balance", UsageLimit, Reset::None),
    row("gateway", "403: monthly quota of this key is used up; it resets on 2026-12-01", UsageLimit, Reset::At(2026, 12, 1, 0, 0, 0)),
    row("deepseek", r#"503: {"error":{"message":"Server overloaded, please try again later"}}"#, Overloaded, Reset::None),
    // Cerebras.
    row("cerebras", r#"429: {"message":"Tokens per minute limit exceeded - too many tokens processed.","retry_after_seconds":59}"#, RateLimit, Reset::In(59 * S)),
    // Ollama (cloud and local).
    row("ollama", "429: you (alice) have reached your session usage limit, upgrade for higher limits: https://ollama.com/upgrade", UsageLimit, Reset::None),
    row("ollama", r#"500: {"error":"llama runner process has terminated: exit status 2"}"#, ServerError, Reset::None),
    row("ollama", "400: prompt too long; exceeded max context length by 1200 tokens", Fatal, Reset::None),
    row("ollama", r#"404: {"error":"model \"qwen3:8b\" not found, try pulling it first"}"#, Fatal, Reset::None),
    // llama.cpp server, vLLM, LM Studio.
    row("llama.cpp", r#"503: {"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#, Overloaded, Reset::None),
    row("llama.cpp", r#"400: {"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":40000,"n_ctx":32768}}"#, Fatal, Reset::None),
    row("vllm", r#"400: {"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 33000 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}"#, Fatal, Reset::None),
    row("vllm", "503 Service Unavailable", Overloaded, Reset::None),
    row("lm studio", "404: No models loaded. Please load a model in the developer page or use the `lms load` command", Fatal, Reset::None),
    row("lm studio", "400: The number of tokens to keep from the initial prompt is greater than the context length.", Fatal, Reset::None),
    // Transport failures as Node and pi word them.
    row("node", "fetch failed", Network, Reset::None),
    row("node", "read ECONNRESET", Network, Reset::None),
    row("node", "getaddrinfo ENOTFOUND api.example.com", Network, Reset::None),
    row("node", "socket hang up", Network, Reset::None),
    row("node", "terminated: other side closed", Network, Reset::None),
    row("pi", "Stream ended without finish_reason", Network, Reset::None),
    // Gateways and local servers in plain words.
    row("gateway", "503: Service temporarily unavailable. Retry-After: Mon, 30 Nov 2026 17:10:00 GMT", Overloaded, Reset::At(2026, 11, 30, 17, 10, 0)),
    row("gateway", "429: Too many requests, retry after 20 seconds", RateLimit, Reset::In(20 * S)),
    row("gateway", "429: rate limited, try again in 2 minutes", RateLimit, Reset::In(2 * M)),
    row("gateway", "429: rate limited, try again in 1.5s", RateLimit, Reset::In(1_500)),
    row("local", "Too many requests, please wait 30 seconds", RateLimit, Reset::In(30 * S)),
    row_in_zone("gateway", "429: rate limit exceeded; resets at 3:05 PM", RateLimit, Reset::At(2026, 11, 30, 20, 5, 0), -5 * 3600),
    row("gateway", "429: request window full, reset at 15:05", RateLimit, Reset::At(2026, 12, 1, 15, 5, 0)),
    row("gateway", "429: limit hit, reset at 2026-11-30T18:05:00+01:00", RateLimit, Reset::At(2026, 11, 30, 17, 5, 0)),
    row("gateway", r#"429 {"error":"rate limited","reset":1796058300}"#, RateLimit, Reset::In(5 * M)),
    row("gateway", "429: slow down; retry-after-ms=997000", RateLimit, Reset::In(997 * S)),
    row("assistant plan", "You reached the limit for advanced AI requests available in your plan for today. Try again in 3 hours, 17 minutes, 52 seconds.", Unknown, Reset::In(3 * H + 17 * M + 52 * S)),
    row("assistant plan", "You have used all of today's free usage on this account. Come back in 3h 47m — your free usage resets automatically at midnight Pacific.", Unknown, Reset::In(3 * H + 47 * M)),
    // Healthy twins: numbers that are not reset times.
    row("twin", r#"400: {"error":{"message":"max_tokens: 4096 > 2048, which is the maximum allowed"}}"#, Fatal, Reset::None),
    row("twin", "Error: 500 Internal Server Error (request id 20261130170000)", ServerError, Reset::None),
    row("twin", "429: too many requests; Limit 100, Remaining 0, window 60", RateLimit, Reset::None),
    row("twin", r#"500: {"error":"internal","timestamp":"2026-11-30T17:05:00Z"}"#, ServerError, Reset::None),
    row("twin", "Request timed out after 600 seconds", Network, Reset::None),
    row("twin", "connection reset by peer", Network, Reset::None),
    row("twin", "Retry failed after 3 attempts: 503 Service Unavailable", Overloaded, Reset::None),
    row("twin", "429: please wait", RateLimit, Reset::None),
    row("twin", "This request would exceed the limit of 128000 tokens in 1 request", Unknown, Reset::None),
    row("twin", "Request was aborted", Unknown, Reset::None),
    row("twin", "429: rate limited; the client will retry 3 times", RateLimit, Reset::None),
    row("twin", "404: model not available in 2 regions; available models: gpt-4o", Fatal, Reset::None),
    row("twin", "429: Usage limit reached for 5 hour", UsageLimit, Reset::None),
    row("twin", "429: rate limited, try again in 2024", RateLimit, Reset::None),
    row("twin", "read ECONNRESET: connection reset by peer at 10:30", Network, Reset::None),
];

#[test]
fn every_row_classifies_as_written() {
    let mut failures = Vec::new();
    for r in ROWS {
        let got = classify(r.text, NOW, r.local);
        let want = (r.kind, r.reset.wall_ms());
        if (got.kind, got.reset_at_wall_ms) != want {
            failures.push(format!(
                "[{}] {:?}\n   want {:?} reset {:?}\n   got  {:?} reset {:?}",
                r.provider, r.text, want.0, want.1, got.kind, got.reset_at_wall_ms
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows differ:\n{}",
        failures.len(),
        ROWS.len(),
        failures.join("\n")
    );
}

#[test]
fn status_is_read_from_pi_and_sdk_shapes() {
    let cases = [
        (
            "Retry failed after 2 attempts: 529 {\"type\":\"error\"}",
            Some(529),
        ),
        ("Cloud Code Assist API error (429): slow down", Some(429)),
        (
            "Error code: 429 - {'error': {'message': 'Rate limit'}}",
            Some(429),
        ),
        ("HttpError: Invalid status code 429 Too Many Requests", Some(429)),
        (r#"{"error":{"code":503,"message":"Loading model"}}"#, Some(503)),
        (
            r#"{"error":{"code":"1302","message":"Rate limit reached"}}"#,
            None,
        ),
        ("fetch failed", None),
    ];
    for (text, want) in cases {
        assert_eq!(classify(text, NOW, 0).status, want, "{text}");
    }
}

fn error(kind: ErrorKind, reset: Option<u64>) -> ProviderError {
    ProviderError {
        kind,
        status: None,
        reset_at_wall_ms: reset,
    }
}

#[test]
fn ladder_steps_and_budget() {
    let steps: Vec<_> = (0..9).map(|a| backoff_ms(a, 1_000)).collect();
    let want = [30 * S, M, 2 * M, 5 * M, 10 * M, 30 * M, H, H, H].map(Some);
    assert_eq!(steps, want);
    // 30 s + 1 + 2 + 5 + 10 min = 18.5 min: a 20-minute budget allows five waits, not six.
    assert_eq!(backoff_ms(4, 20), Some(10 * M));
    assert_eq!(backoff_ms(5, 20), None);
    assert_eq!(backoff_ms(0, 0), None);
    assert_eq!(backoff_ms(u32::MAX, u64::MAX), Some(H));
}

#[test]
fn plan_follows_hint_then_ladder_then_gives_up() {
    let hinted = error(RateLimit, Some(NOW + 25 * S));
    assert_eq!(
        plan(&hinted, 0, NOW, 60),
        Plan::Resume {
            at_wall_ms: NOW + 25 * S + RESUME_MARGIN_MS,
            source: ResumeSource::Hint
        }
    );
    let bare = error(Overloaded, None);
    assert_eq!(
        plan(&bare, 2, NOW, 60),
        Plan::Resume {
            at_wall_ms: NOW + 2 * M,
            source: ResumeSource::Ladder
        }
    );
    assert_eq!(plan(&bare, 5, NOW, 20), Plan::GiveUp);
    assert_eq!(plan(&hinted, 5, NOW, 20), Plan::GiveUp);
}

#[test]
fn plan_notifies_when_waiting_cannot_help() {
    assert_eq!(
        plan(&error(Fatal, Some(NOW + S)), 0, NOW, 60),
        Plan::Notify {
            why: NotifyWhy::Fatal
        }
    );
    assert_eq!(
        plan(&error(UsageLimit, None), 0, NOW, 60),
        Plan::Notify {
            why: NotifyWhy::UsageLimitWithoutReset
        }
    );
    assert_eq!(
        plan(&error(Unknown, None), 0, NOW, 60),
        Plan::Notify {
            why: NotifyWhy::Unrecognised
        }
    );
    let far = NOW + 5 * H;
    assert_eq!(
        plan(&error(UsageLimit, Some(far)), 0, NOW, 60),
        Plan::Notify {
            why: NotifyWhy::ResetBeyondBudget {
                reset_at_wall_ms: far
            }
        }
    );
    assert_eq!(
        plan(&error(UsageLimit, Some(far)), 0, NOW, 600),
        Plan::Resume {
            at_wall_ms: far + RESUME_MARGIN_MS,
            source: ResumeSource::Hint
        }
    );
}

#[test]
fn a_reset_already_past_resumes_now() {
    let stale = error(RateLimit, Some(NOW - 10 * S));
    assert_eq!(
        plan(&stale, 0, NOW, 60),
        Plan::Resume {
            at_wall_ms: NOW + RESUME_MARGIN_MS,
            source: ResumeSource::Hint
        }
    );
}

#[test]
fn only_the_first_bytes_are_read() {
    let padding = "x".repeat(64 * 1024);
    let late_hint = format!("429: {padding} try again in 25s");
    assert_eq!(classify(&late_hint, NOW, 0).reset_at_wall_ms, None);
    assert_eq!(
        classify(&format!("429: try again in 25s {padding}"), NOW, 0).reset_at_wall_ms,
        Some(NOW + 25 * S)
    );
}

/// Fragments of the grammar the parser walks, so generated texts reach deep into it.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("try again in ".to_string()),
        Just("retry-after: ".to_string()),
        Just("reset at ".to_string()),
        Just("\"reset\":".to_string()),
        Just("将在 ".to_string()),
        Just("x-ratelimit-reset-tokens: ".to_string()),
        Just("Retry failed after 3 attempts: ".to_string()),
        Just("2026-12-01T05:35:41+08:00".to_string()),
        Just("Mon, 30 Nov 2026 17:10:00 GMT".to_string()),
        Just("Oct 6, 10am".to_string()),
        Just("3:05 PM".to_string()),
        "[0-9]{1,25}(\\.[0-9]{0,12})?".prop_map(|s| s),
        "(ms|s|m|h|d|seconds|minutes|hours| |, |and |:|-|\\+)".prop_map(|s| s),
        any::<String>(),
    ]
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_text(text in any::<String>(), now in any::<u64>(), offset in any::<i32>()) {
        let got = classify(&text, now, offset);
        let _ = plan(&got, 0, now, 600);
    }

    #[test]
    fn resets_stay_near_now(parts in prop::collection::vec(fragment(), 0..12), offset in -50_400i32..=50_400) {
        let text = parts.concat();
        let got = classify(&text, NOW, offset);
        if let Some(at) = got.reset_at_wall_ms {
            prop_assert!(at + 86_400_000 >= NOW && at <= NOW + 40 * 86_400_000, "{text:?} -> {at}");
        }
        if let Plan::Resume { at_wall_ms, .. } = plan(&got, 0, NOW, 60) {
            prop_assert!(at_wall_ms > NOW && at_wall_ms <= NOW + 60 * M);
        }
    }
}

#[test]
fn work_is_bounded_by_the_scanned_prefix() {
    // Only the first MAX_SCANNED_BYTES are read, however long the text: a hint past them is unseen,
    // so the cost of one call has a fixed ceiling (measured in the benchmarks, not here).
    let filler = "x".repeat(pokeshell_core::supervisor::limit::MAX_SCANNED_BYTES);
    let late = format!("429 rate limited {filler} please try again in 25s");
    assert_eq!(classify(&late, NOW, 0).reset_at_wall_ms, None);
    let early = format!("429 rate limited, please try again in 25s {filler}");
    assert_eq!(classify(&early, NOW, 0).reset_at_wall_ms, Some(NOW + 25 * S));
    let repeated = "reset at retry-after: 1 try again in 1".repeat(1_000);
    assert_eq!(classify(&repeated, NOW, 0).reset_at_wall_ms, Some(NOW + S));
}
