//! What redaction costs one tool result: a 64 KiB result (ordinary text
//! with a few secrets in it) against 200 held values, each with every form
//! the redaction searches (issue 21: at most 1 ms). One automaton pass,
//! whatever the number of values.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

use mino::secrets::Secrets;

fn redact(c: &mut Criterion) {
    let mut secrets = Secrets::new();
    let values: Vec<(String, String)> = (0..200)
        .map(|i| {
            (
                format!("KEY_{i}"),
                format!("secret-value-{i:04}-abcdefghijklmnop"),
            )
        })
        .collect();
    secrets.extend(values.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    let mut result = String::with_capacity(64 * 1024);
    let mut line = 0;
    while result.len() < 64 * 1024 - 100 {
        result.push_str(&format!(
            "src/module{line}.rs:{line}: let value = compute(input, {line}); // ordinary output\n"
        ));
        if line % 500 == 0 {
            result.push_str(&values[line % 200].1);
            result.push('\n');
        }
        line += 1;
    }
    c.bench_function("redact 64 KiB, 200 values", |b| {
        b.iter(|| black_box(secrets.redact_result(black_box(&result))))
    });
}

criterion_group!(benches, redact);
criterion_main!(benches);
