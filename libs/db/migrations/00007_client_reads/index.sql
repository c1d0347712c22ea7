-- Null members of a span's configuration, and of its model_params, say nothing, and the Python client
-- crashes on them when it reads the span back (it iterates configuration.messages whenever the key is
-- there). Writes leave them out since this version; this cleans the rows stored before it, and only them
-- (strict paths: lax mode would unwrap arrays, and `stop: [null]` would match).
update spans s set configuration = coalesce((
  select jsonb_object_agg(
    c.key,
    case when c.key = 'model_params' and jsonb_typeof(c.value) = 'object'
      then (select coalesce(jsonb_object_agg(m.key, m.value), '{}'::jsonb) from jsonb_each(c.value) m where m.value <> 'null'::jsonb)
      else c.value end)
  from jsonb_each(s.configuration) c
  where c.value <> 'null'::jsonb), '{}'::jsonb)
where jsonb_typeof(s.configuration) = 'object'
  and (s.configuration @? 'strict $.* ? (@ == null)' or s.configuration @? 'strict $.model_params.* ? (@ == null)');

-- The client also requires a content in each message, which an assistant's tool call may leave out.
update spans s set configuration = jsonb_set(s.configuration, '{messages}', (
  select jsonb_agg(case when jsonb_typeof(m) = 'object' and not m ? 'content' then m || '{"content": null}' else m end order by i)
  from jsonb_array_elements(s.configuration -> 'messages') with ordinality e(m, i)))
where jsonb_typeof(s.configuration -> 'messages') = 'array'
  and s.configuration @? '$.messages[*] ? (@.type() == "object" && !exists(@.content))';
