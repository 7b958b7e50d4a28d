//! [`ApiError`]: every refusal as a status and a JSON `{"error": "..."}` body, and
//! [`JsonBody`], the JSON extractor whose refusals are such errors (a syntax error
//! names its line and column; a body over the limit is 413).

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An error: what went wrong, in a sentence.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong and, where it helps, what would be right.
    pub error: String,
}

/// The largest request body taken: 1 MiB (a flow or a batch of them is far smaller).
pub const MAX_BODY: usize = 1 << 20;

/// A refused request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// No token where one is needed (RFC 6750 §3: with a `WWW-Authenticate` challenge).
    pub fn unauthorized() -> ApiError {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "this request needs the API token: Authorization: Bearer TOKEN (the controller's log names the file that holds it)",
        )
    }

    pub fn forbidden() -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "wrong API token")
    }

    /// A service the request needs is not running (its app is not in the pipeline).
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let mut r = (
            self.status,
            Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response();
        if unauthorized {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"pharos\""),
            );
        }
        r
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> ApiError {
        match r {
            // axum's texts carry serde_json's "at line L column C".
            JsonRejection::JsonSyntaxError(e) => {
                ApiError::bad_request(format!("malformed JSON: {}", source_text(&e)))
            }
            JsonRejection::JsonDataError(e) => {
                ApiError::bad_request(format!("unexpected JSON: {}", source_text(&e)))
            }
            JsonRejection::MissingJsonContentType(_) => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the body must be JSON: Content-Type: application/json",
            ),
            r if r.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is larger than {MAX_BODY} bytes (1 MiB)"),
            ),
            r => ApiError::new(r.status(), r.body_text()),
        }
    }
}

/// serde_json's own message (with its position), without axum's preamble.
fn source_text(e: &dyn std::error::Error) -> String {
    let mut inner: &dyn std::error::Error = e;
    while let Some(s) = inner.source() {
        inner = s;
    }
    inner.to_string()
}

/// `Json<T>` whose refusals are [`ApiError`]s.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let Json(v) = Json::<T>::from_request(req, state).await?;
        Ok(JsonBody(v))
    }
}
