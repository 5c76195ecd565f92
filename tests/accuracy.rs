//! Classifier accuracy on the 16 labelled tool lists in tests/data/labels (the shared, human
//! labels, revised for the hard-cases standard): prints the confusion matrix and every miss, and
//! holds the bar: at least 98% of tools in the right category, and no tool labelled Execute,
//! Destructive or Financial classified as Read. Servers nobody tuned on are measured on the
//! corpus's frozen test split (tests/model.rs).

use mcprisk::classify::{Engine, RuleFile};
use mcprisk::model::{Category, Severity};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

#[derive(Deserialize)]
struct LabelFile {
    server: String,
    tools: Vec<Label>,
}

#[derive(Deserialize)]
struct Label {
    name: String,
    category: String,
    severity: String,
    #[allow(dead_code)]
    why: String,
}

/// Accuracy figures of one labelled set.
struct Score {
    accuracy: f64,
    dangerous_as_read: Vec<String>,
}

#[test]
fn labelled_servers_are_classified_within_the_bar() {
    let s = evaluate("tests/data/labels", 16);
    assert!(
        s.dangerous_as_read.is_empty(),
        "tools labelled Execute/Destructive/Financial classified as Read: {:?}",
        s.dangerous_as_read
    );
    assert!(
        s.accuracy >= 0.98,
        "category accuracy {:.1}% is below 98%",
        s.accuracy * 100.0
    );
}

fn evaluate(rel: &str, min_files: usize) -> Score {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let engine = Engine::new(RuleFile::embedded());
    let mut matrix: HashMap<(Category, Category), usize> = HashMap::new();
    let (mut total, mut right, mut sev_right) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    let mut dangerous_as_read = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= min_files,
        "labels missing in {}",
        dir.display()
    );
    for path in files {
        let labels: LabelFile =
            serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let tools_path = dir.join("tools").join(format!(
            "{}.json",
            path.file_stem().unwrap().to_string_lossy()
        ));
        let list = mcprisk::targets::toollist::load(tools_path.to_str().unwrap()).unwrap();
        assert!(
            list.errors.is_empty(),
            "{}: {:?}",
            tools_path.display(),
            list.errors
        );
        for label in &labels.tools {
            let tool = list
                .tools
                .iter()
                .find(|t| t.name == label.name)
                .unwrap_or_else(|| panic!("{}: no tool {}", labels.server, label.name));
            let want = Category::parse(&label.category).unwrap();
            let want_sev = Severity::parse(&label.severity).unwrap();
            let got = engine.classify(tool);
            total += 1;
            *matrix.entry((want, got.category)).or_default() += 1;
            if got.category == want {
                right += 1;
            } else {
                misses.push(format!(
                    "{}/{}: labelled {want}, got {} ({})",
                    labels.server,
                    label.name,
                    got.category,
                    got.evidence
                        .iter()
                        .map(|e| format!("{} {}", e.rule, e.detail))
                        .collect::<Vec<_>>()
                        .join("; ")
                ));
            }
            if got.severity == want_sev {
                sev_right += 1;
            } else if got.category == want {
                misses.push(format!(
                    "{}/{}: severity labelled {want_sev}, got {}",
                    labels.server, label.name, got.severity
                ));
            }
            if want >= Category::Execute && got.category == Category::Read {
                dangerous_as_read.push(format!("{}/{}", labels.server, label.name));
            }
        }
    }
    println!("\n{rel}: confusion matrix (rows: label, columns: classified)");
    print!("{:>12}", "");
    for c in Category::ALL {
        print!("{:>12}", c.as_str());
    }
    println!();
    for want in Category::ALL {
        print!("{:>12}", want.as_str());
        for got in Category::ALL {
            print!("{:>12}", matrix.get(&(want, got)).copied().unwrap_or(0));
        }
        println!();
    }
    let accuracy = right as f64 / total as f64;
    println!(
        "\ncategory accuracy: {right}/{total} = {:.1}%; severity accuracy: {sev_right}/{total} = {:.1}%",
        accuracy * 100.0,
        sev_right as f64 * 100.0 / total as f64
    );
    for m in &misses {
        println!("  miss: {m}");
    }
    Score {
        accuracy,
        dangerous_as_read,
    }
}

/// Classifies the tools of a `{"tools": [...]}` document and checks each one's category, in order.
fn assert_categories(doc: serde_json::Value, want: &[Category]) {
    for (t, v, want) in classify_each(doc, want) {
        assert_eq!(v.category, *want, "{}: {:?}", t.name, v.evidence);
    }
}

/// Classifies the tools of a `{"tools": [...]}` document and checks each one's category and
/// severity, in order.
fn assert_verdicts(doc: serde_json::Value, want: &[(Category, Severity)]) {
    for (t, v, want) in classify_each(doc, want) {
        let got = (v.category, v.severity);
        assert_eq!(
            got, *want,
            "{}: {}: {:?}",
            t.name, t.description, v.evidence
        );
    }
}

/// Each tool of the document with its verdict and what is wanted of it, having checked that
/// every tool was read (a `zip` alone would skip one that failed to parse).
fn classify_each<W>(
    doc: serde_json::Value,
    want: &[W],
) -> Vec<(mcprisk::model::Tool, mcprisk::classify::Verdict, &W)> {
    let engine = Engine::new(RuleFile::embedded());
    let list = mcprisk::targets::toollist::from_value(doc, "test").unwrap();
    assert_eq!(list.tools.len(), want.len(), "{:?}", list.errors);
    list.tools
        .into_iter()
        .zip(want)
        .map(|(t, w)| {
            let v = engine.classify(&t);
            (t, v, w)
        })
        .collect()
}

/// A tool as a server sends it, with the given input properties.
fn tool_with(name: &str, description: &str, properties: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"name": name, "description": description,
        "inputSchema": {"type": "object", "properties": properties}})
}

/// A tool that takes one `id` argument.
fn tool_with_id(name: &str, description: &str) -> serde_json::Value {
    tool_with(
        name,
        description,
        serde_json::json!({"id": {"type": "string"}}),
    )
}

/// Checks made-up tools that each take one `id` argument: `(name, description, category
/// wanted)`, in order.
fn assert_cases_with_id(cases: &[(&str, &str, Category)]) {
    let tools: Vec<serde_json::Value> = cases
        .iter()
        .map(|(name, description, _)| tool_with_id(name, description))
        .collect();
    let want: Vec<Category> = cases.iter().map(|c| c.2).collect();
    assert_categories(serde_json::json!({ "tools": tools }), &want);
}

/// Made-up tools that each take one `id` argument, parsed as a server's list would be.
fn parsed_with_id<'a>(
    tools: impl Iterator<Item = (&'a str, &'a str)>,
) -> Vec<mcprisk::model::Tool> {
    let tools: Vec<serde_json::Value> = tools
        .map(|(name, description)| tool_with_id(name, description))
        .collect();
    mcprisk::targets::toollist::from_value(serde_json::json!({ "tools": tools }), "test")
        .unwrap()
        .tools
}

/// A preview or an estimate of a charge computes it and moves nothing: MR-C102 (money object
/// changed) leaves it alone, where the same money words with an acting verb match. The rule's
/// match is evidence the learned model weighs, so a weak match still pushed such a preview
/// towards Financial (Paddle's `preview_subscription_update` among the shared labels).
#[test]
fn previews_and_estimates_of_money_are_not_money_changed() {
    let engine = Engine::new(RuleFile::embedded());
    let cases = [
        (
            "preview_subscription_update",
            "Preview an update for a subscription without applying those changes.",
            false,
        ),
        (
            "estimate_order_total",
            "Estimate an order's total, tax included.",
            false,
        ),
        (
            "update_subscription",
            "Update a subscription's items and billing period.",
            true,
        ),
    ];
    let tools = parsed_with_id(
        cases
            .iter()
            .map(|(name, description, _)| (*name, *description)),
    );
    for (t, (_, _, money)) in tools.iter().zip(&cases) {
        let keys = engine.model_keys(t);
        assert_eq!(
            keys.iter().any(|k| k == "r:MR-C102"),
            *money,
            "{}: {keys:?}",
            t.name
        );
    }
}

/// Computing an answer is Read (docs/classification.md): arithmetic, solving, ranking and
/// filtering what the caller supplies leave nothing behind. Before MR-C501 knew these words,
/// the rules fell silent on them and left them "Write by caution".
#[test]
fn computing_an_answer_is_read_to_the_rules() {
    let rules = Engine::new(RuleFile::embedded()).with_model(None);
    let cases = [
        ("multiply", "Multiply two numbers."),
        ("solve_polynomial", "Find the roots of a polynomial."),
        (
            "rank_documents",
            "Rank the supplied documents by relevance.",
        ),
        (
            "filter_rows",
            "Keep the rows of a table that match a condition.",
        ),
        ("predict_churn", "Predict which customers will churn."),
    ];
    for t in &parsed_with_id(cases.iter().copied()) {
        let v = rules.classify(t);
        assert_eq!(v.category, Category::Read, "{}: {:?}", t.name, v.evidence);
    }
}

/// The credentials case that docs/classification.md decides: adding a key is Write; rotating,
/// regenerating or changing one cuts off whoever held the old one, so it is Destructive.
#[test]
fn replacing_a_credential_is_destructive_and_adding_one_is_write() {
    let cases = [
        (
            "rotate_api_key",
            "Rotates an API key.",
            Category::Destructive,
        ),
        (
            "regenerate_token",
            "Regenerates the access token.",
            Category::Destructive,
        ),
        (
            "change_password",
            "Changes the user's password.",
            Category::Destructive,
        ),
        (
            "roll_secret",
            "Rolls the webhook signing secret.",
            Category::Destructive,
        ),
        ("create_api_key", "Creates a new API key.", Category::Write),
        (
            "list_api_keys",
            "Lists the API keys of the account.",
            Category::Read,
        ),
    ];
    assert_cases_with_id(&cases);
}

/// Made-up examples of the error kinds issue 14 lists, as docs/classification.md decides them.
#[test]
fn the_issues_examples_of_money_and_passthroughs() {
    // Deleting or archiving a billing object is Financial: the taxonomy checks Financial
    // first, so the money rule (MR-C102) is hard, and the model's "Destructive" for
    // `delete_price` does not win.
    assert_categories(
        serde_json::json!({"tools": [
            {"name": "exercise_option", "description": "Exercise an options contract.",
             "inputSchema": {"type": "object", "properties": {"contract": {"type": "string"}}}},
            {"name": "make_api_request", "description": "Make a request to a service API.",
             "inputSchema": {"type": "object", "properties": {
                 "service": {"type": "string"}, "method": {"type": "string"},
                 "body": {"type": "object"}}}},
            {"name": "docs_lookup", "description": "Look up the API documentation for an endpoint.",
             "inputSchema": {"type": "object", "properties": {
                 "method": {"type": "string"}, "path": {"type": "string"}}}},
            {"name": "cancel_all_orders", "description": "Cancel all open orders.",
             "inputSchema": {"type": "object", "properties": {}}},
            {"name": "stats", "description": "Show server statistics.",
             "inputSchema": {"type": "object", "properties": {"reset": {"type": "boolean", "description": "Reset the counters after reading."}}}},
            {"name": "meters_archive", "description": "Archive a meter. It can no longer be used and stops recording events.",
             "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}},
            {"name": "delete_price", "description": "Permanently delete a price. This action is irreversible and removes all its data.",
             "inputSchema": {"type": "object", "properties": {"price_id": {"type": "string"}}}}
        ]}),
        &[
            Category::Financial,
            Category::Execute,
            Category::Read,
            Category::Financial,
            Category::Destructive,
            Category::Financial,
            Category::Financial,
        ],
    );
}

/// Moving on-chain value is Financial (MR-C105); an auth token or a repository's ownership is
/// not value. A shell or SSH name before the real action word is a namespace: `bash_write_file`
/// writes a file, `ssh_list_connections` lists.
#[test]
fn token_transfers_are_money_and_shell_prefixes_are_namespaces() {
    let tool = |name: &str, description: &str| {
        tool_with(
            name,
            description,
            serde_json::json!({"to": {"type": "string"}, "amount": {"type": "string"}}),
        )
    };
    assert_categories(
        serde_json::json!({"tools": [
            tool("transfer_erc20", "Transfer ERC20 tokens to an address."),
            tool("send_eth", "Send ETH to an address."),
            tool("swap_tokens", "Swap one token for another on a DEX."),
            tool("approve_token_spending", "Approve a spender to use your tokens."),
            tool("transfer_repository_ownership", "Transfer a repository to another owner."),
            tool("create_token", "Create a personal access token."),
            tool("bash_write_file", "Write a file in the sandbox."),
            tool("ssh_list_connections", "List the open SSH connections."),
            tool("bash", "Run a bash command."),
        ]}),
        &[
            Category::Financial,
            Category::Financial,
            Category::Financial,
            Category::Financial,
            Category::Write,
            Category::Write,
            Category::Write,
            Category::Read,
            Category::Execute,
        ],
    );
}

/// Bookkeeping records that carry amounts (bills, deposits, sales receipts, vendor credits)
/// change a monetary balance, and a billing checkout binds the account to pay: Financial
/// (MR-C102, MR-C103). A git checkout and a read receipt are not money.
#[test]
fn ledger_records_and_billing_checkouts_are_money() {
    let cases = [
        ("create_bill", "Create a vendor bill.", Category::Financial),
        (
            "edit_deposit",
            "Edit a deposit's lines and amounts.",
            Category::Financial,
        ),
        (
            "edit_sales_receipt",
            "Edit a sales receipt.",
            Category::Financial,
        ),
        (
            "edit_vendor_credit",
            "Edit a vendor credit.",
            Category::Financial,
        ),
        (
            "billing_checkout",
            "Create a plan checkout session.",
            Category::Financial,
        ),
        (
            "approve_work",
            "Approve the work and release their payment to the worker.",
            Category::Financial,
        ),
        (
            "checkout_branch",
            "Check out a git branch.",
            Category::Write,
        ),
        (
            "send_read_receipt",
            "Send a read receipt for a message.",
            Category::Write,
        ),
    ];
    assert_cases_with_id(&cases);
}

/// Money nouns with a common sense outside money (an audio split, a diary journal, a position
/// on a page, a file transfer, a quotation, a page margin) are not money on their own: the
/// hard money rule (MR-C102) needs a money word in the texts or an amount-like argument beside
/// them. With one, the same nouns are money (change M1, `catalog/corpus/preregistrations.md`).
#[test]
fn money_nouns_with_other_senses_need_a_sign_of_money() {
    let not_money = [
        (
            "edit_split_delete",
            "Delete the selected audio without closing the gap.",
        ),
        (
            "create_journal",
            "Add a diary page to the calendar's journal.",
        ),
        (
            "set_header_item_position",
            "Set the position of an item in the report header.",
        ),
        (
            "start_transfer",
            "Start copying files from one cloud drive to another.",
        ),
        (
            "add_quote",
            "Save a quote from a book to the knowledge base.",
        ),
        (
            "set_page_margins",
            "Set the margins of the document's pages.",
        ),
    ];
    let tools = parsed_with_id(not_money.iter().copied());
    let engine = Engine::new(RuleFile::embedded());
    for tool in &tools {
        let v = engine.classify(tool);
        assert_ne!(
            v.category,
            Category::Financial,
            "{}: {:?}",
            tool.name,
            v.evidence
        );
        assert!(
            !v.evidence.iter().any(|e| e.rule == "MR-C102"),
            "{}: {:?}",
            tool.name,
            v.evidence
        );
    }
    let money = serde_json::json!({"tools": [
        tool_with("create_transfer", "Move money between two of the company's bank accounts.",
            serde_json::json!({"from_account": {"type": "string"}, "to_account": {"type": "string"}, "amount": {"type": "number"}})),
        tool_with("close_position", "Close an open position.",
            serde_json::json!({"position_id": {"type": "string"}, "units": {"type": "number"}})),
        tool_with("delete_transaction", "Delete a transaction from the budget.",
            serde_json::json!({"budget_id": {"type": "string"}, "transaction_id": {"type": "string"}})),
    ]});
    assert_categories(money, &[Category::Financial; 3]);
}

/// Activating a workflow or cron job makes it run on its own, and deactivating it stops it: the
/// lifecycle of something that runs (MR-C302). Enabling an alert rule is not.
#[test]
fn switching_a_workflow_on_or_off_is_lifecycle_control() {
    assert_categories(
        serde_json::json!({"tools": [
            tool_with_id("activate_workflow", "Activate a workflow so that its triggers run it."),
            tool_with_id("deactivate_workflow", "Deactivate a workflow."),
            tool_with_id("enable_cron", "Enable a cron job."),
            tool_with_id("enable_alert", "Enable an alert rule."),
        ]}),
        &[
            Category::Execute,
            Category::Execute,
            Category::Execute,
            Category::Write,
        ],
    );
}

/// The Read step-ups that docs/classification.md lists: a Read that returns private messages,
/// request headers, environment variables, or the contents of any file under a path the caller
/// names is Medium; metadata about the same things, and deployment environments, stay Low.
#[test]
fn reads_of_private_messages_headers_and_any_file_are_medium() {
    let tool = |name: &str, description: &str, props: serde_json::Value| {
        serde_json::json!({"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": props}})
    };
    let text = serde_json::json!({"type": "string"});
    let cases = [
        (
            tool(
                "get_message",
                "Get an email message by its id.",
                serde_json::json!({"id": text}),
            ),
            Severity::Medium,
        ),
        (
            tool(
                "get_channel_history",
                "Fetch recent messages from a channel.",
                serde_json::json!({"channel": text}),
            ),
            Severity::Medium,
        ),
        (
            tool(
                "get_thread",
                "Get every message of an email thread.",
                serde_json::json!({"thread_id": text}),
            ),
            Severity::Medium,
        ),
        (
            tool(
                "get_request_details",
                "Get full details of one captured request: headers and body.",
                serde_json::json!({"id": text}),
            ),
            Severity::Medium,
        ),
        (
            tool(
                "search_code",
                "Search file contents with ripgrep under a directory.",
                serde_json::json!({"pattern": text, "path": text}),
            ),
            Severity::Medium,
        ),
        (
            tool(
                "get_env",
                "Returns all environment variables of the server process.",
                serde_json::json!({}),
            ),
            Severity::Medium,
        ),
        (
            tool(
                "list_environments",
                "Lists the deployment environments of a project (staging, production).",
                serde_json::json!({"project": text}),
            ),
            Severity::Low,
        ),
        (
            tool(
                "list_message_templates",
                "List the message templates of the account.",
                serde_json::json!({}),
            ),
            Severity::Low,
        ),
        (
            tool(
                "list_console_messages",
                "List the console messages of the page.",
                serde_json::json!({}),
            ),
            Severity::Low,
        ),
        (
            tool(
                "get_pull_request_details",
                "Get the details of a pull request.",
                serde_json::json!({"number": text}),
            ),
            Severity::Low,
        ),
        // "ssh" names the transport; a key is what makes it a secret.
        (
            tool(
                "ssh_list_connections",
                "List the open SSH connections and their hosts.",
                serde_json::json!({}),
            ),
            Severity::Low,
        ),
        (
            tool(
                "get_ssh_key",
                "Get an SSH key of the account by its name.",
                serde_json::json!({"name": text}),
            ),
            Severity::Medium,
        ),
    ];
    let (tools, want): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .map(|(t, severity)| (t, (Category::Read, severity)))
        .unzip();
    assert_verdicts(serde_json::json!({ "tools": tools }), &want);
}

/// Shell on the user's machine is Critical; the same command run in a vendor's sandbox stays
/// High (docs/classification.md, severity step-ups), unless the sandbox is a local container.
#[test]
fn commands_in_a_vendors_sandbox_stay_high() {
    let doc = serde_json::json!({"tools": [
        {"name": "run_command", "description": "Run a shell command.",
         "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}}},
        {"name": "sandbox_exec", "description": "Execute a command in a cloud sandbox.",
         "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}}},
        {"name": "sandbox_exec", "description": "Execute a command in a local Docker sandbox.",
         "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}
    ]});
    assert_verdicts(
        doc,
        &[
            (Category::Execute, Severity::Critical),
            (Category::Execute, Severity::High),
            (Category::Execute, Severity::Critical),
        ],
    );
}

/// A call whose description says it pays on-chain from a wallet (an x402 payment in USDC) is
/// Financial whatever data it returns (MR-C106); a tool that only talks about x402, or a price
/// billed to an account per call, is not.
#[test]
fn per_call_onchain_payments_are_money() {
    let doc = serde_json::json!({"tools": [
        {"name": "get_funding", "description": "Get funding rate analysis for a perpetual. Cost: $0.01 USDC via x402.",
         "inputSchema": {"type": "object", "properties": {"coin": {"type": "string"}}}},
        {"name": "note_detail", "description": "Fetch a note by link. Settles ~0.01 USDC via x402 on each successful call.",
         "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}},
        {"name": "scan_token", "description": "Run a risk scan on a token.\n\n    Returns a report. Pays $0.01 USDC on Base behind the\n    scenes via x402.",
         "inputSchema": {"type": "object", "properties": {"address": {"type": "string"}}}},
        {"name": "screen_name", "description": "Screen a name against sanctions lists. Paid x402 service ($0.01 USDC); returns the payment challenge.",
         "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}},
        {"name": "x402_check", "description": "Check if a URL requires x402 payment and get the payment requirements.",
         "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}},
        {"name": "screen_sanctions", "description": "Screen a name against sanctions lists. Price: $0.45 per call, billed in fiat by the marketplace.",
         "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
    ]});
    for (t, v, money) in classify_each(doc, &[true, true, true, true, false, false]) {
        assert_eq!(
            v.evidence.iter().any(|e| e.rule == "MR-C106"),
            *money,
            "{}: {:?}",
            t.name,
            v.evidence
        );
        if *money {
            assert_eq!(
                v.category,
                Category::Financial,
                "{}: {:?}",
                t.name,
                v.evidence
            );
        }
    }
}

/// A tag, label, dependency, relationship, assignee or reviewer taken off a thing leaves both in
/// place, and adding it again undoes it: Write to the rules (MR-C406), as a removal "from" a
/// collection is. Taking a person, a role or a group away revokes access, and deleting the tag
/// itself loses it: both stay Destructive (MR-C201).
#[test]
fn a_tag_or_link_taken_off_is_write_and_a_person_removed_is_destructive() {
    let rules = Engine::new(RuleFile::embedded()).with_model(None);
    let cases = [
        (
            "remove_card_label",
            "Remove a label from a card.",
            Category::Write,
        ),
        (
            "remove_dependency",
            "Remove a dependency between two tasks.",
            Category::Write,
        ),
        ("removeTags", "Remove tags from a note.", Category::Write),
        (
            "unlink_relationship",
            "Unlink a relationship between two records.",
            Category::Write,
        ),
        (
            "remove_member",
            "Remove a member from the workspace.",
            Category::Destructive,
        ),
        (
            "remove_user_labels",
            "Remove a user's labels.",
            Category::Destructive,
        ),
        ("delete_label", "Delete a label.", Category::Destructive),
        ("remove_file", "Remove a file.", Category::Destructive),
    ];
    let tools = parsed_with_id(cases.iter().map(|(n, d, _)| (*n, *d)));
    for (t, (_, _, want)) in tools.iter().zip(&cases) {
        let v = rules.classify(t);
        assert_eq!(v.category, *want, "{}: {:?}", t.name, v.evidence);
    }
}

/// The most dangerous mode decides, also where the action is a free string whose values only
/// the text lists ("add|get|update|remove", "'store', 'search' or 'delete'"): MR-C203. An
/// update that takes a password or private key can change a credential (MR-C211); creating
/// an account with a password does not. "Evaluate" runs code only when there is code to
/// evaluate (MR-C301): scoring an answer is a Read.
#[test]
fn listed_delete_actions_credential_updates_and_evaluations() {
    let text = serde_json::json!({"type": "string"});
    assert_categories(
        serde_json::json!({"tools": [
            tool_with("claim", "Claims: add|get|update|remove|move.",
                serde_json::json!({"action": text, "claim_id": text})),
            tool_with("memory", "Project notes kept across sessions.",
                serde_json::json!({"action": {"type": "string",
                    "description": "'store', 'search' or 'delete'"}, "id": text})),
            tool_with("update_user", "Update a user's name, group or password.",
                serde_json::json!({"user_id": text, "name": text, "password": text})),
            tool_with("update_wireguard_interface", "Update a WireGuard interface.",
                serde_json::json!({"name": text, "listen_port": {"type": "integer"}, "private_key": text})),
            tool_with("create_user", "Create a user account.",
                serde_json::json!({"name": text, "password": text})),
            tool_with("evaluate_answer", "Score an LLM answer against a rubric and return the score.",
                serde_json::json!({"answer": text, "rubric": text})),
            tool_with("evaluate", "Evaluate a JavaScript expression in the page and return its value.",
                serde_json::json!({"expression": text})),
        ]}),
        &[
            Category::Destructive,
            Category::Destructive,
            Category::Destructive,
            Category::Destructive,
            Category::Write,
            Category::Read,
            Category::Execute,
        ],
    );
}
