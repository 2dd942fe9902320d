//! A local server's context window, where the server says what it was
//! started with: llama.cpp's `GET /props` (`n_ctx`) and Ollama's `POST
//! /api/show` (`num_ctx` among the model's parameters, else Ollama's
//! default). Asked once at start, only of a loopback server whose window
//! no settings file gave; any failure leaves the window as it was.

use std::time::Duration;

use serde_json::{Value, json};

/// Ollama's context when a model sets no `num_ctx`.
pub const OLLAMA_DEFAULT_CTX: u64 = 4096;

/// A window the server reported, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub tokens: u64,
    pub source: String,
}

/// The window a loopback server of an OpenAI wire reports for `model`'s
/// model, when no settings file gave one.
pub async fn for_settings(model: crate::config::ModelSettings) -> Option<Reported> {
    use crate::config::ProviderKind;
    let openai = matches!(
        model.provider,
        ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses
    );
    if model.context_window_set || !openai || !crate::config::is_loopback_url(&model.base_url) {
        return None;
    }
    reported(&model.base_url, &model.model, Duration::from_millis(1500)).await
}

/// Asks the server at `base_url` (its OpenAI path, `.../v1`) for the
/// window `model` is served with, within `timeout` for each question.
pub async fn reported(base_url: &str, model: &str, timeout: Duration) -> Option<Reported> {
    // A loopback server over plain HTTP needs no certificates: the
    // probe is awaited before the first frame, so it must not read them.
    let plain = reqwest::Url::parse(base_url)
        .is_ok_and(|url| !super::http::needs_certificates(&url, super::http::env_var));
    let client = if plain {
        super::http::plain_client(timeout)
    } else {
        super::http::client(timeout)
    }
    .ok()?;
    let root = base_url.trim_end_matches('/');
    let root = root.strip_suffix("/v1").unwrap_or(root);
    let props = client
        .get(format!("{root}/props"))
        .timeout(timeout)
        .send()
        .await;
    if let Ok(response) = props
        && response.status().is_success()
        && let Some(body) = small_json(response).await
        && let Some(tokens) = llama_cpp(&body)
    {
        return Some(Reported {
            tokens,
            source: "reported by the server: llama.cpp /props n_ctx".into(),
        });
    }
    let show = client
        .post(format!("{root}/api/show"))
        .json(&json!({ "model": model }))
        .timeout(timeout)
        .send()
        .await
        .ok()?;
    if !show.status().is_success() {
        return None;
    }
    ollama(&small_json(show).await?)
}

/// The most of an answer read: `/props` and `/api/show` are a few KiB
/// (Ollama's includes the model's template and license).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The answer as JSON, when it is at most `MAX_ANSWER_BYTES`; a server
/// that answers with more (or with anything else) is not asked further.
async fn small_json(mut response: reqwest::Response) -> Option<Value> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).ok()
}

/// `n_ctx` of llama.cpp's `/props`, per slot where it says so.
fn llama_cpp(body: &Value) -> Option<u64> {
    body.pointer("/default_generation_settings/n_ctx")
        .or_else(|| body.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
}

/// Ollama's `/api/show`: the model's `num_ctx` parameter, else Ollama's
/// default (never more than the model's own length).
fn ollama(body: &Value) -> Option<Reported> {
    let parameters = body.get("parameters").and_then(Value::as_str);
    let set = parameters.and_then(|p| {
        p.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    if let Some(tokens) = set.filter(|n| *n > 0) {
        return Some(Reported {
            tokens,
            source: "reported by the server: Ollama num_ctx".into(),
        });
    }
    let length = body
        .get("model_info")
        .and_then(Value::as_object)?
        .iter()
        .find(|(key, _)| key.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())?;
    Some(Reported {
        tokens: length.min(OLLAMA_DEFAULT_CTX),
        source: format!(
            "Ollama's default; the model allows {length}: set num_ctx or context_window for more"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_says_it_its_own_way() {
        let body = json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1});
        assert_eq!(llama_cpp(&body), Some(8192));
        assert_eq!(llama_cpp(&json!({"n_ctx": 0})), None);
        let set = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx                        16384", "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(ollama(&set).map(|r| r.tokens), Some(16384));
        let unset = json!({"model_info": {"qwen2.context_length": 32768}});
        let r = ollama(&unset).unwrap();
        assert_eq!(r.tokens, OLLAMA_DEFAULT_CTX);
        assert!(r.source.contains("32768"));
        assert_eq!(ollama(&json!({"error": "model not found"})), None);
    }
}
