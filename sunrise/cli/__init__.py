"""The `sunrise` command (`main`) and its subcommands, one module per feature: datasets,
reports, keys of a tenant (`tenant_keys`); what they print (`console_output`,
`dataset_output`) and the options the asking commands share (`run_options`)."""
