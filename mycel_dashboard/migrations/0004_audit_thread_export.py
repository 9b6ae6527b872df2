from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("mycel_dashboard", "0003_audit_retention_export"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditentry",
            name="action",
            field=models.CharField(
                choices=[
                    ("rollback", "Roll back"),
                    ("undo", "Undo rollback"),
                    ("config_save", "Save config"),
                    ("config_restore", "Restore config version"),
                    ("summary_preview", "Generate a dry-run summary"),
                    ("retention_export", "Export a retention script"),
                    ("export", "Export a thread"),
                ],
                db_index=True,
                max_length=32,
            ),
        ),
    ]
