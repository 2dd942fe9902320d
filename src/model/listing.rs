//! The models a service offers, where its wire has a list: `GET
//! {base_url}/models` on both OpenAI wires (OpenAI, OpenRouter, Ollama,
//! llama.cpp's server, vLLM) and on Anthropic's, each answering
//! `{"data": [{"id": NAME}, ...]}`. Asked only when `/model` wants the
//! list, sent only where the chat requests go, with the same key; an
//! answer is read to a bound and any failure is said, never retried.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::config::ProviderConfig;
use crate::config::ProviderKind;

/// The most of an answer read (OpenRouter's list is a few hundred KiB).
const MAX_LIST_BYTES: usize = 4 << 20;
/// The most names kept of one list.
const MAX_NAMES: usize = 500;

/// The names the service at `cfg`'s base URL lists, in its order.
pub async fn model_names(cfg: &ProviderConfig, timeout: Duration) -> Result<Vec<String>, String> {
    let headers = match cfg.kind {
        ProviderKind::Scripted => return Ok(Vec::new()),
        ProviderKind::Anthropic => anthropic_headers(cfg)?,
        _ => super::http::bearer_headers(cfg).map_err(|e| e.to_string())?,
    };
    let client = super::http::client(timeout)?;
    let url = format!("{}/models", cfg.base_url.trim().trim_end_matches('/'));
    let shown = super::http::shown_url(&url);
    let mut response = client
        .get(&url)
        .headers(headers)
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| format!("{shown}: {}", super::http::describe(&e.without_url())))?;
    if !response.status().is_success() {
        return Err(format!("{shown} answered {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{shown}: {}", super::http::describe(&e.without_url())))?
    {
        if body.len() + chunk.len() > MAX_LIST_BYTES {
            return Err(format!(
                "{shown} answered with more than {MAX_LIST_BYTES} bytes"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    let value: Value = serde_json::from_slice(&body)
        .map_err(|_| format!("{shown} did not answer with a JSON list of models"))?;
    Ok(names(&value))
}

fn anthropic_headers(cfg: &ProviderConfig) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(
        HeaderName::from_static("anthropic-version"),
        HeaderValue::from_static(super::anthropic::ANTHROPIC_VERSION),
    );
    if let Some(key) = cfg.api_key.as_deref().filter(|key| !key.is_empty()) {
        let (name, value) =
            super::http::secret_header("x-api-key", key).map_err(|e| e.to_string())?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// `data[].id`, each a model name mino would send, without repeats.
fn names(value: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in value
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(id) = item.get("id").and_then(Value::as_str)
            && crate::config::models::is_model_name(id)
            && !out.iter().any(|n| n == id)
        {
            out.push(id.to_string());
            if out.len() == MAX_NAMES {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_the_ids_mino_could_send() {
        let list = json!({"data": [
            {"id": "gpt-5"}, {"id": "gpt-5"}, {"id": "bad name"}, {"id": 3},
            {"id": "\u{1b}[2J"}, {"object": "model"}, {"id": "gpt-5-mini"}
        ]});
        assert_eq!(names(&list), vec!["gpt-5", "gpt-5-mini"]);
        assert!(names(&json!({"models": []})).is_empty());
    }
}
