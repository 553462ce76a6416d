// The models of this deployment and their custom fields. Edit this file to extend the built-in Users model
// (its `values` map, as in the spec: [type, letters, default]) or to add models; it is validated at start-up.
import { buildValueSchemas, validateValuesMap, type ValuesMap } from './values'

export interface ModelDefinition {
  readonly values: ValuesMap
}

export const models = {
  Users: {
    values: {
      avatar_url: ['String', 'cru'],
      preferences: ['Object', 'cru', {}],
    },
  },
} as const satisfies Record<string, ModelDefinition>

for (const [name, model] of Object.entries(models)) validateValuesMap(name, model.values)

export const userValueSchemas = buildValueSchemas(models.Users.values)
